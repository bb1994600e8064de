#include "apps/translate/translation_task.h"

#include <algorithm>
#include <numeric>

#include "core/graph.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "data/bleu.h"
#include "nn/cross_entropy.h"
#include "optim/checkpoint.h"

namespace uwaga::apps {
namespace {

constexpr std::int64_t kBatchesPerWindow = 50;  // length-sorting window, in batches
constexpr std::size_t kMistakesKept = 10;

TranslationBatch make_batch(const std::vector<EncodedPair>& pairs, const std::vector<std::int64_t>& index,
                 std::int64_t pad) {
  std::vector<std::vector<std::int64_t>> src, in, out;
  for (std::int64_t i : index) {
    const EncodedPair& p = pairs[static_cast<std::size_t>(i)];
    src.push_back(p.source);
    in.emplace_back(p.target.begin(), p.target.end() - 1);
    out.emplace_back(p.target.begin() + 1, p.target.end());
  }
  TranslationBatch b{nn::pad_sequences(src, pad), nn::pad_sequences(in, pad),
                     nn::pad_sequences(out, pad)};
  b.tgt_out = reshape(b.tgt_out, {b.tgt_out.numel()});
  return b;
}

// Counted (non-pad) targets and how many of them the logits' argmax gets right.
std::pair<std::int64_t, std::int64_t> count_correct(const Tensor& logits, const Tensor& targets,
                                                     std::int64_t pad) {
  const std::vector<std::int64_t> predicted = argmax(logits, 1).to_indices();
  const std::vector<std::int64_t> truth = targets.to_indices();
  std::int64_t counted = 0, correct = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    if (truth[i] == pad) continue;
    ++counted;
    correct += predicted[i] == truth[i];
  }
  return {counted, correct};
}

std::vector<std::string> words_of(const std::vector<std::int64_t>& ids, const Vocabulary& vocab) {
  std::vector<std::string> words;
  for (std::int64_t id : ids) words.push_back(vocab.word(id));
  return words;
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

}  // namespace

std::vector<std::int64_t> encode_source(const std::string& english, const Vocabulary& vocab,
                                        std::vector<std::string>* unknown) {
  std::vector<std::int64_t> ids;
  for (const std::string& w : tokenize(english)) {
    ids.push_back(vocab.id(w));
    if (ids.back() == Vocabulary::kUnk && unknown) unknown->push_back(w);
  }
  ids.push_back(Vocabulary::kEos);
  return ids;
}

std::vector<EncodedPair> encode_pairs(const std::vector<TranslationPair>& pairs,
                                      const TranslateRunConfig& run) {
  std::vector<EncodedPair> out;
  out.reserve(pairs.size());
  for (const TranslationPair& p : pairs) {
    EncodedPair e{encode_source(p.english, run.src_vocab), run.tgt_vocab.encode(p.spanish, true)};
    const auto longest = static_cast<std::int64_t>(std::max(e.source.size(), e.target.size() - 1));
    if (longest > run.model.max_length)
      fail("the pair '", p.english, "' => '", p.spanish, "' needs ", longest,
           " positions, more than max_length ", run.model.max_length, "; raise --max-length");
    out.push_back(std::move(e));
  }
  return out;
}

TranslationEval evaluate_translation(nn::Seq2SeqTransformer& model,
                                     const std::vector<TranslationPair>& all_pairs,
                                     const TranslateRunConfig& run, std::int64_t beam,
                                     std::int64_t limit, double length_penalty) {
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  std::vector<TranslationPair> pairs = all_pairs;
  if (limit > 0 && static_cast<std::size_t>(limit) < pairs.size()) pairs.resize(limit);
  const std::vector<EncodedPair> encoded = encode_pairs(pairs, run);
  const std::int64_t pad = run.model.pad_id;
  TranslationEval result;
  result.n = static_cast<std::int64_t>(pairs.size());
  if (pairs.empty()) return result;

  // Sorted by source length, batches hold little padding.
  std::vector<std::int64_t> order(pairs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return encoded[a].source.size() < encoded[b].source.size();
  });
  constexpr std::size_t kEvalBatch = 250;
  std::vector<nn::Hypothesis> produced(pairs.size());
  double loss_sum = 0;
  std::int64_t counted = 0, correct = 0;
  nn::DecodingOptions decoding;
  decoding.bos_id = Vocabulary::kBos;
  decoding.eos_id = Vocabulary::kEos;
  decoding.beam = beam;
  decoding.length_penalty = length_penalty;
  for (std::size_t start = 0; start < order.size(); start += kEvalBatch) {
    const std::vector<std::int64_t> index(
        order.begin() + static_cast<std::ptrdiff_t>(start),
        order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + kEvalBatch)));
    // Teacher-forced loss and next-word accuracy.
    TranslationBatch b = make_batch(encoded, index, pad);
    Tensor logits = model.forward(b.src, b.tgt_in);
    logits = reshape(logits, {b.tgt_out.numel(), logits.size(2)});
    const auto [n, ok] = count_correct(logits, b.tgt_out, pad);
    loss_sum += nn::cross_entropy(logits, b.tgt_out, {pad, 0.0}).item() * static_cast<double>(n);
    counted += n;
    correct += ok;
    // Translations.
    std::vector<std::vector<std::int64_t>> sources;
    for (std::int64_t i : index) sources.push_back(encoded[i].source);
    if (beam == 1) {
      std::vector<nn::Hypothesis> hs = nn::greedy_decode(model, sources, decoding);
      for (std::size_t k = 0; k < index.size(); ++k) produced[index[k]] = std::move(hs[k]);
    } else {
      for (std::size_t k = 0; k < index.size(); ++k)
        produced[index[k]] = nn::beam_search(model, sources[k], decoding);
    }
  }
  result.loss = counted ? loss_sum / static_cast<double>(counted) : 0.0;
  result.token_accuracy = counted ? static_cast<double>(correct) / counted : 0.0;

  std::vector<TokenList> candidates, references;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::vector<std::int64_t> reference(encoded[i].target.begin() + 1,
                                              encoded[i].target.end() - 1);
    candidates.push_back(words_of(produced[i].tokens, run.tgt_vocab));
    references.push_back(words_of(reference, run.tgt_vocab));
    if (produced[i].tokens == reference) {
      ++result.exact;
    } else if (result.mistakes.size() < kMistakesKept) {
      result.mistakes.push_back(pairs[i].english + " => " + joined(candidates.back()) +
                                "   (expected: " + pairs[i].spanish + ")");
    }
  }
  result.bleu = corpus_bleu(candidates, references).bleu;
  model.train(was_training);
  return result;
}

TranslationTask::TranslationTask(nn::Seq2SeqTransformer& model, const TranslationCorpus& corpus,
                                 const TranslateRunConfig& run, optim::DataParallelOptions parallel)
    : model_(model),
      corpus_(corpus),
      run_(run),
      train_(encode_pairs(corpus.train, run)),
      parallel_(
          model,
          [&run] {
            Generator unused(0);  // a replica's initial values are replaced by the model's
            return std::make_shared<nn::Seq2SeqTransformer>(run.model, unused);
          },
          parallel),
      dropout_seeds_(run.seed ^ 0xD1B54A32D192ED03ull) {
  if (batches_per_epoch() == 0)
    fail("the training split has ", train_.size(), " pairs, fewer than one batch of ",
         run.batch_size, "; lower --batch-size or raise --train-size");
}

std::int64_t TranslationTask::batches_per_epoch() const {
  return static_cast<std::int64_t>(train_.size()) / run_.batch_size;
}

void TranslationTask::begin_epoch(std::int64_t epoch) {
  // A generator of its own per epoch: batch i of epoch e depends only on (seed, e).
  Generator gen(run_.seed ^ (0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(epoch + 1)));
  std::vector<std::int64_t> order(train_.size());
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[gen.below(i + 1)]);
  const std::int64_t B = run_.batch_size, n_batches = batches_per_epoch();
  order.resize(static_cast<std::size_t>(n_batches * B));  // drop the last, partial batch
  auto length = [&](std::int64_t i) { return train_[i].source.size() + train_[i].target.size(); };
  batches_.clear();
  for (std::int64_t w = 0; w < n_batches; w += kBatchesPerWindow) {
    auto first = order.begin() + w * B;
    auto last = order.begin() + std::min(n_batches, w + kBatchesPerWindow) * B;
    std::stable_sort(first, last, [&](std::int64_t a, std::int64_t b) {
      return length(a) < length(b);
    });
    for (auto it = first; it != last; it += B) batches_.emplace_back(it, it + B);
  }
  for (std::size_t i = batches_.size() - 1; i > 0; --i)
    std::swap(batches_[i], batches_[gen.below(i + 1)]);
}

TranslationBatch TranslationTask::batch(std::int64_t index) const {
  if (index < 0 || index >= static_cast<std::int64_t>(batches_.size()))
    fail("TranslationTask: batch ", index, " of ", batches_.size(), " (begin_epoch first)");
  return make_batch(train_, batches_[static_cast<std::size_t>(index)], run_.model.pad_id);
}

optim::StepResult TranslationTask::loss_on(nn::Seq2SeqTransformer& model,
                                           const TranslationBatch& b) const {
  const std::int64_t pad = run_.model.pad_id;
  Tensor logits = model.forward(b.src, b.tgt_in);                 // (B, T, V)
  logits = reshape(logits, {b.tgt_out.numel(), logits.size(2)});  // (B·T, V)
  optim::StepResult r;
  r.loss = nn::cross_entropy(logits, b.tgt_out, {pad, run_.label_smoothing});
  NoGradGuard no_grad;
  const auto [counted, correct] = count_correct(logits, b.tgt_out, pad);
  r.items = counted;  // target words, the unit of the loss
  r.correct = correct;
  return r;
}

optim::StepResult TranslationTask::train_batch(std::int64_t index) {
  return loss_on(model_, batch(index));
}

optim::StepResult TranslationTask::train_step(std::int64_t index) {
  const TranslationBatch b = batch(index);
  const std::int64_t B = b.src.size(0), T = b.tgt_in.size(1);
  // words_before[i]: target words (not padding) in rows 0 … i − 1, for the micro-batches' shares.
  const std::vector<std::int64_t> targets = b.tgt_out.to_indices();
  std::vector<std::int64_t> words_before(static_cast<std::size_t>(B) + 1, 0);
  for (std::int64_t i = 0; i < B; ++i) {
    std::int64_t in_row = 0;
    for (std::int64_t t = 0; t < T; ++t) in_row += targets[i * T + t] != run_.model.pad_id;
    words_before[i + 1] = words_before[i] + in_row;
  }
  auto words = [&](optim::RowRange rows) { return words_before[rows.end] - words_before[rows.begin]; };
  const std::uint64_t seed = dropout_seeds_.next_u64();
  return parallel_.step(
      B,
      [&](nn::Seq2SeqTransformer& model, optim::RowRange rows) {
        model.embedding_dropout().generator().seed_with(
            seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(rows.begin + 1));
        return loss_on(model, {slice(b.src, 0, rows.begin, rows.end),
                               slice(b.tgt_in, 0, rows.begin, rows.end),
                               slice(b.tgt_out, 0, rows.begin * T, rows.end * T)});
      },
      [&](optim::RowRange rows) {
        return static_cast<double>(words(rows)) / static_cast<double>(words({0, B}));
      });
}

std::map<std::string, double> TranslationTask::evaluate() {
  TranslationEval e = evaluate_translation(model_, corpus_.valid, run_, 1, run_.eval_size);
  return {{"exact_match", e.exact_match()},
          {"bleu", e.bleu},
          {"loss", e.loss},
          {"token_accuracy", e.token_accuracy}};
}

std::string TranslationTask::save_state() const {
  return optim::generator_state_to_string(dropout_seeds_.state());
}

void TranslationTask::load_state(const std::string& state) {
  if (state.empty()) return;
  dropout_seeds_.set_state(optim::generator_state_from_string(state));
}

}  // namespace uwaga::apps
