// Decoding under extreme settings: length penalties so large that |y|^α overflows a double must
// still rank finished sentences by score / |y|^α.
#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/decoding.h"
#include "nn/seq2seq_transformer.h"

using namespace uwaga;
using namespace uwaga::nn;

namespace {

Seq2SeqConfig tiny_seq2seq_config() {
  Seq2SeqConfig c;
  c.src_vocab = 7;
  c.tgt_vocab = 9;
  c.dim = 8;
  c.heads = 2;
  c.encoder_layers = 1;
  c.decoder_layers = 1;
  c.mlp_dim = 12;
  c.max_length = 8;
  return c;
}

}  // namespace

TEST_CASE("decoding: a huge length penalty still favours long sentences",
          "[nn][seq2seq][decoding]") {
  // The larger α, the more a longer sentence is favoured: the winner at α is at least as long as
  // the winner at any smaller α. 5^α overflows a double from α ≈ 441 on, and 5^1e308 at once;
  // before, every sentence of two or more words then ranked -0, the search stopped at the first
  // one finished, and α = 1e308 picked a shorter sentence than α = 50.
  bool some_run_checked_a_longer_winner = false;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    Generator gen(seed);
    Seq2SeqTransformer model(tiny_seq2seq_config(), gen);
    for (const std::vector<std::int64_t>& s :
         std::vector<std::vector<std::int64_t>>{{4, 5, 6, 2}, {3, 2}, {5, 4, 2}}) {
      DecodingOptions o;
      o.max_length = 5;
      o.beam = 9;
      o.length_penalty = 50;
      const Hypothesis moderate = beam_search(model, s, o);
      std::vector<Hypothesis> huge;
      for (double alpha : {1e3, 1e6, 1e308}) {
        o.length_penalty = alpha;
        huge.push_back(beam_search(model, s, o));
        const Hypothesis& h = huge.back();
        INFO("seed " << seed << ", α " << alpha << ": " << h.tokens.size() << " words; α = 50: "
                     << moderate.tokens.size() << " words");
        REQUIRE((h.finished || !moderate.finished));
        REQUIRE(h.tokens.size() >= moderate.tokens.size());
      }
      // All three rank by length first, then by score: the same winner.
      REQUIRE(huge[1].tokens == huge[0].tokens);
      REQUIRE(huge[2].tokens == huge[0].tokens);
      some_run_checked_a_longer_winner |= huge[0].tokens.size() > 1;
    }
  }
  REQUIRE(some_run_checked_a_longer_winner);
}

TEST_CASE("decoding: ranks_above compares score / length^α without overflow",
          "[nn][seq2seq][decoding]") {
  // Where the quotients are representable it agrees with length_normalized_score:
  // −3 / 3 = −1 beats −1.5 / 1 = −1.5 at α = 1; at α = 0 the totals decide.
  const Hypothesis a{.tokens = {7, 8}, .score = -3.0, .finished = true};
  const Hypothesis b{.tokens = {}, .score = -1.5, .finished = true};
  REQUIRE(length_normalized_score(a, 1) > length_normalized_score(b, 1));
  REQUIRE(ranks_above(a.score, ranked_length(a), b.score, ranked_length(b), 1));
  REQUIRE(ranks_above(b.score, ranked_length(b), a.score, ranked_length(a), 0));
  // 3^1e308 overflows: the quotient is −0 for a, yet b (one word) must still rank below.
  REQUIRE(length_normalized_score(a, 1e308) == 0.0);
  REQUIRE(ranks_above(a.score, ranked_length(a), b.score, ranked_length(b), 1e308));
  REQUIRE_FALSE(ranks_above(b.score, ranked_length(b), a.score, ranked_length(a), 1e308));
  // A score of exactly 0 beats any negative one, whatever the lengths; equal ones tie.
  REQUIRE(ranks_above(0.0, 1, -1e-9, 30, 1e308));
  REQUIRE_FALSE(ranks_above(0.0, 1, 0.0, 30, 1e308));
}
