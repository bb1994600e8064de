#include "apps/translate/translate_training.h"

#include <algorithm>
#include <numeric>

#include "core/autograd.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "data/translation/bleu.h"
#include "nn/inference_scope.h"

namespace uwaga::apps {
namespace {

constexpr std::size_t kMistakesKept = 10;

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

std::vector<EncodedPair> encode_pairs(const std::vector<TranslationPair>& pairs,
                                      const TranslateRunConfig& run) {
  return uwaga::encode_pairs(pairs, run.src_vocab, run.tgt_vocab, run.model.max_length);
}

TranslationEval evaluate_translation(nn::Seq2SeqTransformer& model,
                                     const std::vector<TranslationPair>& all_pairs,
                                     const TranslateRunConfig& run, std::int64_t beam,
                                     std::int64_t limit, double length_penalty) {
  const nn::InferenceScope inference(model);  // eval mode, no graph, until the return
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
  const nn::CrossEntropyLoss teacher_forced({pad, 0.0});  // the loss without label smoothing
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
    const Batch b = make_translation_batch(encoded, index, pad);  // {src, tgt_in}, tgt_out
    Tensor logits = model.forward_batch(b.inputs);
    logits = reshape(logits, {b.targets.numel(), logits.size(2)});
    const Tensor tgt_out = reshape(b.targets, {b.targets.numel()});
    const std::int64_t n = teacher_forced.count(tgt_out);
    const std::int64_t ok = teacher_forced.correct(logits, tgt_out);
    loss_sum += teacher_forced(logits, tgt_out).item() * static_cast<double>(n);
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
  return result;
}

namespace {

TranslationBatches training_batches(const TranslateRunConfig& run,
                                    const TranslationCorpus& corpus) {
  TranslationBatches batches(encode_pairs(corpus.train, run), step_batch(run), run.seed,
                             run.model.pad_id);
  if (batches.batches_per_epoch() == 0)
    fail("the training split has ", batches.pairs(), " pairs, fewer than one batch of ",
         step_batch_text(run), "; lower --batch-size or raise --train-size");
  return batches;
}

}  // namespace

TranslateTraining::TranslateTraining(const TranslateRunConfig& run,
                                     const TranslationCorpus& corpus,
                                     optim::TrainerOptions options)
    : Training(run, [&] { return training_batches(run, corpus); },
               nn::CrossEntropyLoss({run.model.pad_id, run.label_smoothing}),
               {run.lr, 0.9, 0.98, 1e-9},  // β2 = 0.98, ε = 1e-9 as in "Attention Is All You Need"
               "valid", std::move(options)),  // test stays unseen until eval
      corpus_(corpus) {}

std::map<std::string, double> TranslateTraining::evaluate() {
  const TranslationEval e = evaluate_translation(*model_, corpus_.valid, run_, 1, run_.eval_size);
  return {{"exact_match", e.exact_match()},
          {"bleu", e.bleu},
          {"loss", e.loss},
          {"token_accuracy", e.token_accuracy}};
}

}  // namespace uwaga::apps
