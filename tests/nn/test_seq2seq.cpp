// The encoder-decoder Transformer and its decoders: names, gradients, masks, decoding, and a
// few steps of training on the real toy corpus.
#include <cmath>
#include <catch2/catch.hpp>

#include <numeric>
#include <set>

#include "core/uwaga.h"
#include "data/translation/translation_corpus.h"
#include "data/translation/vocabulary.h"
#include "nn/cross_entropy.h"
#include "nn/decoding.h"
#include "nn/pad_sequences.h"
#include "nn/seq2seq_transformer.h"
#include "optim/adam.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

Seq2SeqConfig tiny_config(const std::string& positions) {
  Seq2SeqConfig c;
  c.src_vocab = 7;
  c.tgt_vocab = 9;
  c.dim = 8;
  c.heads = 2;
  c.encoder_layers = 1;
  c.decoder_layers = 1;
  c.mlp_dim = 12;
  c.max_length = 8;
  c.positions = positions;
  return c;
}

std::vector<Tensor> parameters_of(const Module& m) { return m.parameters(); }

// A batch with padding on both sides: source rows of 4 and 2 words, targets of 3 and 2.
Tensor tiny_src() { return Tensor::from_indices({4, 5, 6, 2, 3, 2, 0, 0}, {2, 4}); }
Tensor tiny_tgt() { return Tensor::from_indices({1, 4, 5, 1, 7, 0}, {2, 3}); }

Seq2SeqConfig small_config(std::int64_t src_vocab, std::int64_t tgt_vocab) {
  Seq2SeqConfig c;
  c.src_vocab = src_vocab;
  c.tgt_vocab = tgt_vocab;
  c.dim = 32;
  c.heads = 2;
  c.encoder_layers = 1;
  c.decoder_layers = 1;
  c.mlp_dim = 64;
  c.max_length = 24;
  return c;
}

}  // namespace

TEST_CASE("seq2seq: parameters are named as in PyTorch", "[nn][seq2seq]") {
  Generator gen(0);
  Seq2SeqConfig c = tiny_config("learned");
  c.encoder_layers = 2;
  Seq2SeqTransformer model(c, gen);
  std::set<std::string> names;
  for (const auto& [name, p] : model.named_parameters()) names.insert(name);
  for (const char* expected :
       {"src_embed.weight", "tgt_embed.weight", "src_pos_embed.weight", "tgt_pos_embed.weight",
        "encoder.0.attn.qkv.weight", "encoder.1.mlp.fc2.bias", "encoder_norm.weight",
        "decoder.0.self_attn.qkv.weight", "decoder.0.cross_attn.q.weight",
        "decoder.0.cross_attn.kv.weight", "decoder.0.norm3.bias", "decoder_norm.bias",
        "head.weight", "head.bias"}) {
    INFO(expected);
    REQUIRE(names.count(expected) == 1);
  }
  Generator gen2(0);
  Seq2SeqTransformer sinusoidal(tiny_config("sinusoidal"), gen2);
  for (const auto& [name, p] : sinusoidal.named_parameters())
    REQUIRE(name.find("pos_embed") == std::string::npos);  // fixed positions: no parameters
}

TEST_CASE("seq2seq: config checks, JSON round trip", "[nn][seq2seq]") {
  Seq2SeqConfig c = tiny_config("learned");
  c.dropout = 0.25;
  Seq2SeqConfig back = Seq2SeqConfig::from_json(c.to_json());
  REQUIRE(back.to_json() == c.to_json());
  c.heads = 3;
  REQUIRE_THROWS_WITH(c.validate(), Contains("dim 8 is not divisible by heads 3"));
  c = tiny_config("rotary");
  REQUIRE_THROWS_WITH(c.validate(), Contains("'sinusoidal' or 'learned'"));
  c = tiny_config("learned");
  c.src_vocab = 0;
  REQUIRE_THROWS_WITH(c.validate(), Contains("src_vocab must be positive"));
  REQUIRE_THROWS_WITH(Seq2SeqConfig::from_json("{\"dim\": 8}"), Contains("seq2seq config"));

  Generator gen(0);
  Seq2SeqTransformer model(tiny_config("learned"), gen);
  REQUIRE_THROWS_WITH(model.forward(Tensor::from_indices({1, 7}, {1, 2}), tiny_tgt()),
                      Contains("outside its vocabulary of 7"));
  REQUIRE_THROWS_WITH(model.forward(Tensor::from_indices(std::vector<std::int64_t>(9, 1), {1, 9}),
                                    Tensor::from_indices({1}, {1, 1})),
                      Contains("expected 1 to max_length 8"));
}

TEST_CASE("seq2seq: configurations beyond generous bounds fail naming the field and the limit",
          "[nn][seq2seq]") {
  // A flag or checkpoint with 10¹² layers or positions would otherwise hang or throw bad_alloc.
  const std::int64_t huge = 1000000000000;
  struct Case { std::int64_t Seq2SeqConfig::*member; const char* field; const char* limit; };
  for (const Case& c : std::vector<Case>{{&Seq2SeqConfig::max_length, "max_length", "100000"},
                                         {&Seq2SeqConfig::encoder_layers, "encoder_layers", "1000"},
                                         {&Seq2SeqConfig::decoder_layers, "decoder_layers", "1000"},
                                         {&Seq2SeqConfig::dim, "dim", "65536"},
                                         {&Seq2SeqConfig::mlp_dim, "mlp_dim", "65536"},
                                         {&Seq2SeqConfig::src_vocab, "src_vocab", "1000000"},
                                         {&Seq2SeqConfig::tgt_vocab, "tgt_vocab", "1000000"}}) {
    const std::string message =
        std::string(c.field) + " 1000000000000 is above the limit of " + c.limit;
    INFO(message);
    Seq2SeqConfig bad = tiny_config("sinusoidal");
    bad.*c.member = huge;
    REQUIRE_THROWS_WITH(bad.validate(), Contains(message));
    REQUIRE_THROWS_WITH(Seq2SeqConfig::from_json(bad.to_json()), Contains(message));
  }
  Seq2SeqConfig edge = tiny_config("sinusoidal");
  edge.max_length = 100000;
  edge.encoder_layers = edge.decoder_layers = 1000;
  REQUIRE_NOTHROW(edge.validate());
}

TEST_CASE("seq2seq: gradcheck of a tiny model in float64", "[nn][seq2seq][gradcheck]") {
  for (const std::string positions : {"sinusoidal", "learned"}) {
    DYNAMIC_SECTION(positions << " positions") {
      Generator gen(1);
      Seq2SeqTransformer model(tiny_config(positions), gen);
      model.to(DType::Float64);
      const Tensor src = tiny_src(), tgt = tiny_tgt();
      Tensor logits = model.forward(src, tgt);
      REQUIRE(logits.shape() == Shape{2, 3, 9});
      GradcheckOptions o;
      o.atol = 1e-6;
      require_gradcheck([&](const std::vector<Tensor>&) { return model.forward(src, tgt); },
                        parameters_of(model), o);
    }
  }
}

TEST_CASE("seq2seq: gradcheck through the loss, with ignore_index and label smoothing",
          "[nn][seq2seq][gradcheck]") {
  Generator gen(2);
  Seq2SeqTransformer model(tiny_config("sinusoidal"), gen);
  model.to(DType::Float64);
  const Tensor src = tiny_src(), tgt = tiny_tgt();
  const Tensor targets = Tensor::from_indices({4, 5, 2, 7, 2, 0}, {6});  // last one is PAD
  require_gradcheck([&](const std::vector<Tensor>&) {
    return cross_entropy(reshape(model.forward(src, tgt), {6, 9}), targets, {0, 0.1});
  }, parameters_of(model));
}

TEST_CASE("seq2seq: padding does not change a sentence's logits", "[nn][seq2seq]") {
  Generator gen(3);
  Seq2SeqTransformer model(tiny_config("sinusoidal"), gen);
  model.to(DType::Float64);
  // Row 1 of the batch is the short sentence padded; alone it has no padding.
  Tensor batch = model.forward(tiny_src(), tiny_tgt());
  Tensor alone = model.forward(Tensor::from_indices({3, 2}, {1, 2}),
                               Tensor::from_indices({1, 7}, {1, 2}));
  for (std::int64_t t = 0; t < 2; ++t)
    for (std::int64_t v = 0; v < 9; ++v)
      REQUIRE(batch.at({1, t, v}) == Approx(alone.at({0, t, v})).margin(1e-12));
}

TEST_CASE("seq2seq: the decoder cannot see later target words", "[nn][seq2seq]") {
  Generator gen(4);
  Seq2SeqTransformer model(tiny_config("learned"), gen);
  Tensor a = model.forward(tiny_src(), Tensor::from_indices({1, 4, 5, 1, 7, 8}, {2, 3}));
  Tensor b = model.forward(tiny_src(), Tensor::from_indices({1, 4, 6, 1, 7, 3}, {2, 3}));
  for (std::int64_t t = 0; t < 2; ++t)
    for (std::int64_t v = 0; v < 9; ++v) REQUIRE(a.at({0, t, v}) == b.at({0, t, v}));
  REQUIRE(a.at({0, 2, 0}) != b.at({0, 2, 0}));
  // decode_last is the last row of decode.
  Tensor memory = model.encode(tiny_src());
  Tensor last = model.decode_last(Tensor::from_indices({1, 4, 5, 1, 7, 8}, {2, 3}), memory,
                                  model.padding_mask(tiny_src()));
  for (std::int64_t v = 0; v < 9; ++v)
    REQUIRE(last.at({1, v}) == Approx(a.at({1, 2, v})).margin(1e-6));
}

TEST_CASE("seq2seq: cross-attention maps are kept on request", "[nn][seq2seq]") {
  Generator gen(5);
  Seq2SeqTransformer model(tiny_config("sinusoidal"), gen);
  model.keep_cross_attention(true);
  model.forward(tiny_src(), tiny_tgt());
  const std::vector<Tensor> maps = model.cross_attention_maps();
  REQUIRE(maps.size() == 1);
  REQUIRE(maps[0].shape() == Shape{2, 2, 3, 4});  // (B, h, T, S)
  for (std::int64_t t = 0; t < 3; ++t) {
    double row = 0;
    for (std::int64_t s = 0; s < 4; ++s) row += maps[0].at({1, 0, t, s});
    REQUIRE(row == Approx(1.0));
    REQUIRE(maps[0].at({1, 0, t, 2}) == 0.0);  // padded source words get no weight
    REQUIRE(maps[0].at({1, 1, t, 3}) == 0.0);
  }
}

TEST_CASE("seq2seq: encoder and decoder self-attention maps are kept on request",
          "[nn][seq2seq]") {
  Generator gen(6);
  Seq2SeqTransformer model(tiny_config("learned"), gen);
  model.keep_self_attention(true);
  model.forward(tiny_src(), tiny_tgt());
  const std::vector<Tensor> encoder = model.encoder_attention_maps();
  const std::vector<Tensor> decoder = model.decoder_self_attention_maps();
  REQUIRE(encoder.size() == static_cast<std::size_t>(model.config.encoder_layers));
  REQUIRE(decoder.size() == static_cast<std::size_t>(model.config.decoder_layers));
  REQUIRE(encoder[0].shape() == Shape{2, 2, 4, 4});  // (B, h, S, S)
  REQUIRE(decoder[0].shape() == Shape{2, 2, 3, 3});  // (B, h, T, T)
  for (std::int64_t i = 0; i < 4; ++i) {
    double row = 0;
    for (std::int64_t j = 0; j < 4; ++j) row += encoder[0].at({1, 1, i, j});
    REQUIRE(row == Approx(1.0));
    REQUIRE(encoder[0].at({1, 1, i, 2}) == 0.0);  // padded source words get no weight
  }
  for (std::int64_t t = 0; t < 3; ++t) {
    double row = 0;
    for (std::int64_t s = 0; s < 3; ++s) {
      if (s > t) REQUIRE(decoder[0].at({0, 0, t, s}) == 0.0);  // causal
      row += decoder[0].at({0, 0, t, s});
    }
    REQUIRE(row == Approx(1.0));
  }
}

TEST_CASE("decoding: an untrained model terminates within the length bound",
          "[nn][seq2seq][decoding]") {
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    Generator gen(seed);
    Seq2SeqConfig c = tiny_config(seed % 2 ? "learned" : "sinusoidal");
    c.max_length = 16;
    Seq2SeqTransformer model(c, gen);
    const std::vector<std::vector<std::int64_t>> sources = {
        {4, 5, 6, 2}, {3, 2}, {2}, {6, 6, 6, 6, 6, 2}};
    DecodingOptions o;
    o.max_length = 5;
    for (const Hypothesis& h : greedy_decode(model, sources, o)) {
      REQUIRE(h.tokens.size() + (h.finished ? 1 : 0) <= 5);
      REQUIRE(std::isfinite(h.score));
      for (std::int64_t id : h.tokens) REQUIRE((id >= 0 && id < c.tgt_vocab && id != o.eos_id));
    }
    o.max_length = 0;  // automatic: 2·S + 10, capped by the model's max_length
    REQUIRE(decoding_length_bound(model, 2, o) == 14);
    REQUIRE(decoding_length_bound(model, 6, o) == 16);
    for (const Hypothesis& h : greedy_decode(model, sources, o))
      REQUIRE(static_cast<std::int64_t>(h.tokens.size()) <= 16);
    o.beam = 3;
    for (const auto& s : sources) {
      const Hypothesis h = beam_search(model, s, o);
      const std::int64_t bound =
          decoding_length_bound(model, static_cast<std::int64_t>(s.size()), o);
      REQUIRE(static_cast<std::int64_t>(h.tokens.size()) <= bound);
    }
    REQUIRE(model.is_training());  // decoding restores the training flag
  }
}

TEST_CASE("decoding: beam search with K = 1 is greedy decoding exactly",
          "[nn][seq2seq][decoding]") {
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    Generator gen(seed);
    Seq2SeqConfig c = tiny_config("sinusoidal");
    c.max_length = 12;
    Seq2SeqTransformer model(c, gen);
    for (const std::vector<std::int64_t>& s :
         std::vector<std::vector<std::int64_t>>{{4, 5, 6, 2}, {3, 2}, {2}, {5, 4, 2}}) {
      DecodingOptions o;
      o.beam = 1;
      const Hypothesis greedy = greedy_decode(model, {s}, o)[0];
      const Hypothesis beam = beam_search(model, s, o);
      REQUIRE(beam.tokens == greedy.tokens);
      REQUIRE(beam.score == greedy.score);
      REQUIRE(beam.finished == greedy.finished);
    }
  }
}

TEST_CASE("decoding: a hypothesis' score is the sum of its words' log-probabilities",
          "[nn][seq2seq][decoding]") {
  // Whatever the beam width, re-scoring the result with one teacher-forced pass gives its score.
  Generator gen(7);
  Seq2SeqConfig c = tiny_config("sinusoidal");
  Seq2SeqTransformer model(c, gen);
  DecodingOptions o;
  o.max_length = 6;
  for (std::int64_t k : {1, 2, 4}) {
    o.beam = k;
    const Hypothesis h = beam_search(model, {4, 5, 2}, o);
    // Re-score the hypothesis with teacher forcing: the same sum of log-probabilities.
    std::vector<std::int64_t> input = {o.bos_id};
    input.insert(input.end(), h.tokens.begin(), h.tokens.end());
    std::vector<std::int64_t> targets = h.tokens;
    if (h.finished) targets.push_back(o.eos_id);
    else input.pop_back();
    NoGradGuard no_grad;
    model.eval();
    Tensor logits = model.forward(Tensor::from_indices({4, 5, 2}, {1, 3}),
                                  Tensor::from_indices(input, {1, (std::int64_t)input.size()}));
    model.train();
    double score = 0;
    for (std::size_t t = 0; t < targets.size(); ++t)
      score += log_probabilities(reshape(logits, {logits.size(1), logits.size(2)}),
                                 static_cast<std::int64_t>(t))[targets[t]];
    REQUIRE(h.score == Approx(score).margin(1e-4));
  }
}

TEST_CASE("decoding: a wide beam gives a non-empty translation; beams beyond V act as V",
          "[nn][seq2seq][decoding]") {
  // An untrained model gives EOS right after BOS a probability near 1/V, more than any sentence
  // of a word or more, so a wide enough beam used to return the empty translation. No
  // translation is empty, and BOS and PAD are never words of one.
  bool some_beam_differs_from_greedy = false;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    Generator gen(seed);
    Seq2SeqConfig c = tiny_config("sinusoidal");  // V = 9 target words
    Seq2SeqTransformer model(c, gen);
    for (const std::vector<std::int64_t>& s :
         std::vector<std::vector<std::int64_t>>{{4, 5, 6, 2}, {3, 2}, {5, 4, 2}}) {
      DecodingOptions o;
      o.max_length = 4;
      const Hypothesis greedy = greedy_decode(model, {s}, o)[0];
      REQUIRE_FALSE(greedy.tokens.empty());
      o.beam = 50;
      const Hypothesis wide = beam_search(model, s, o);
      INFO("seed " << seed << ", greedy " << greedy.tokens.size() << " words, score "
                   << greedy.score << "; beam 50 " << wide.tokens.size() << " words, score "
                   << wide.score);
      REQUIRE_FALSE(wide.tokens.empty());
      some_beam_differs_from_greedy |= wide.tokens != greedy.tokens;
      for (const Hypothesis& h : {greedy, wide})
        for (std::int64_t id : h.tokens)
          REQUIRE((id != o.bos_id && id != o.eos_id && id != c.pad_id));
      // K >= V decodes as K = V, however large (10¹² used to grow the beam V-fold per step).
      o.beam = c.tgt_vocab;
      const Hypothesis at_v = beam_search(model, s, o);
      for (std::int64_t k : {c.tgt_vocab + 1, std::int64_t(50), std::int64_t(1000000000000)}) {
        o.beam = k;
        const Hypothesis h = beam_search(model, s, o);
        REQUIRE(h.tokens == at_v.tokens);
        REQUIRE(h.score == at_v.score);
        REQUIRE(h.finished == at_v.finished);
      }
    }
  }
  REQUIRE(some_beam_differs_from_greedy);  // the wide beams did search
}

TEST_CASE("decoding: a length penalty α ranks finished sentences by score / |y|^α",
          "[nn][seq2seq][decoding]") {
  // The search keeps the same prefixes whatever α; only which finished sentence wins, and when
  // the search may stop, change. So the α-winner is at least as good by score / |y|^α as the
  // α = 0 winner, and (its total score being no higher) at least as long.
  bool some_penalty_changed_the_winner = false;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    Generator gen(seed);
    Seq2SeqTransformer model(tiny_config("sinusoidal"), gen);  // V = 9
    for (const std::vector<std::int64_t>& s :
         std::vector<std::vector<std::int64_t>>{{4, 5, 6, 2}, {3, 2}, {5, 4, 2}}) {
      DecodingOptions o;
      o.max_length = 5;
      o.beam = 9;
      const Hypothesis by_sum = beam_search(model, s, o);
      for (double alpha : {0.5, 1.0, 2.0}) {
        o.length_penalty = alpha;
        const Hypothesis h = beam_search(model, s, o);
        INFO("seed " << seed << ", α " << alpha << ": " << h.tokens.size() << " words, score "
                     << h.score << "; α = 0: " << by_sum.tokens.size() << " words, score "
                     << by_sum.score);
        REQUIRE((h.finished || !by_sum.finished));
        REQUIRE(h.score <= by_sum.score);
        REQUIRE(length_normalized_score(h, alpha) >= length_normalized_score(by_sum, alpha));
        REQUIRE(h.tokens.size() >= by_sum.tokens.size());
        some_penalty_changed_the_winner |= h.tokens != by_sum.tokens;
      }
    }
  }
  REQUIRE(some_penalty_changed_the_winner);
  Hypothesis h{.tokens = {7, 8}, .score = -3.0, .finished = true};  // two words and EOS
  REQUIRE(length_normalized_score(h, 0) == -3.0);
  REQUIRE(length_normalized_score(h, 1) == Approx(-1.0));
  h.finished = false;
  REQUIRE(length_normalized_score(h, 1) == Approx(-1.5));
}

TEST_CASE("decoding: log_probabilities checks the row", "[nn][seq2seq][decoding]") {
  Tensor logits = Tensor::from_vector({0, 1, 2, 3, 4, 4, 3, 2, 1, 0}, {2, 5});
  REQUIRE(log_probabilities(logits, 1)[0] == Approx(log_probabilities(logits, 0)[4]));
  REQUIRE_THROWS_WITH(log_probabilities(logits, 7),
                      Contains("row 7 is out of range for logits (2, 5)"));
  REQUIRE_THROWS_WITH(log_probabilities(logits, -1), Contains("row -1"));
  REQUIRE_THROWS_WITH(log_probabilities(Tensor::zeros({5}), 0), Contains("(rows, V)"));
}

TEST_CASE("decoding: options are checked", "[nn][seq2seq][decoding]") {
  Generator gen(0);
  Seq2SeqTransformer model(tiny_config("sinusoidal"), gen);
  DecodingOptions o;
  o.beam = 0;
  REQUIRE_THROWS_WITH(beam_search(model, {4, 2}, o), Contains("beam width must be at least 1"));
  o = {};
  for (double alpha : {-1.0, std::nan(""), HUGE_VAL}) {
    o.length_penalty = alpha;
    REQUIRE_THROWS_WITH(beam_search(model, {4, 2}, o),
                        Contains("length penalty must be a finite number ≥ 0"));
  }
  o = {};
  o.eos_id = 99;
  REQUIRE_THROWS_WITH(greedy_decode(model, {{4, 2}}, o), Contains("eos_id 99"));
  REQUIRE_THROWS_WITH(greedy_decode(model, {{}}, {}), Contains("at least one id"));
  REQUIRE(greedy_decode(model, {}, {}).empty());
}

TEST_CASE("seq2seq: a few steps of training on the toy corpus lower the loss",
          "[nn][seq2seq][training]") {
  TranslationCorpusOptions co;
  co.train_size = 512;
  co.valid_size = 10;
  co.test_size = 10;
  const TranslationCorpus corpus = generate_translation_corpus(co);
  std::vector<std::string> english, spanish;
  for (const auto& p : corpus.train) english.push_back(p.english), spanish.push_back(p.spanish);
  const Vocabulary en = Vocabulary::build(english), es = Vocabulary::build(spanish);

  Generator gen(0);
  Seq2SeqTransformer model(small_config(en.size(), es.size()), gen);
  optim::AdamW opt(optim::make_param_groups(model, 0.0), {3e-3});
  // Eight batches of 32 pairs, in turn, teacher forced: "BOS y … " -> "y … EOS".
  struct Batch {
    Tensor src, in, out;
  };
  std::vector<Batch> batches;
  for (std::size_t b = 0; b < 8; ++b) {
    std::vector<std::vector<std::int64_t>> src, in, out;
    for (std::size_t i = 32 * b; i < 32 * (b + 1); ++i) {
      std::vector<std::int64_t> s = en.encode(corpus.train[i].english);
      s.push_back(Vocabulary::kEos);
      const std::vector<std::int64_t> t = es.encode(corpus.train[i].spanish, true);
      src.push_back(s);
      in.emplace_back(t.begin(), t.end() - 1);
      out.emplace_back(t.begin() + 1, t.end());
    }
    batches.push_back({pad_sequences(src, 0), pad_sequences(in, 0),
                       reshape(pad_sequences(out, 0), {-1})});
  }
  std::vector<double> losses;
  for (std::size_t step = 0; step < 32; ++step) {
    const Batch& b = batches[step % batches.size()];
    opt.zero_grad();
    Tensor logits = model.forward(b.src, b.in);
    Tensor loss = cross_entropy(reshape(logits, {b.out.numel(), es.size()}), b.out, {0, 0.0});
    loss.backward();
    opt.step();
    losses.push_back(loss.item());
  }
  // The first and the last pass over the eight batches.
  const double first = std::accumulate(losses.begin(), losses.begin() + 8, 0.0) / 8;
  const double last = std::accumulate(losses.end() - 8, losses.end(), 0.0) / 8;
  INFO("mean loss of the first pass " << first << ", of the last " << last);
  REQUIRE(losses.front() > std::log(static_cast<double>(es.size())) - 1.0);  // about chance
  REQUIRE(last < first - 1.0);
}
