#pragma once
// One uwaga-translate training run, set up the one way `uwaga-translate train` and the Python
// bindings both use: a Seq2SeqTransformer on the toy English -> Spanish corpus with teacher
// forcing; and the evaluation shared by `train` and `eval`: greedy (or beam) decoding, exact
// match and corpus BLEU-4.
#include <map>
#include <string>
#include <vector>

#include "apps/common/training.h"
#include "apps/translate/translate_run_config.h"
#include "data/translation/translation_batches.h"
#include "nn/decoding.h"
#include "nn/loss.h"
#include "nn/seq2seq_transformer.h"

namespace uwaga::apps {

// Sentence pairs per forward/backward pass in uwaga-translate's training (optim::DataParallel's
// micro_batch): the default preset trains as fast as with whole shares (3,887 against 3,805
// sentences/s on two cores) and holds less memory (peak RSS 44 against 73 MB on one thread, 60
// against 75 MB on two; uwaga-bench --mode translate --micro-batch N).
constexpr std::int64_t kTranslateMicroBatch = 16;

// The translator's batches (data/translation/translation_batches.h) of `pairs`, checked against the run's
// max_length.
std::vector<EncodedPair> encode_pairs(const std::vector<TranslationPair>& pairs,
                                      const TranslateRunConfig& run);

struct TranslationEval {
  std::int64_t n = 0;              // sentences
  std::int64_t exact = 0;          // translations identical to the reference
  double bleu = 0;                 // corpus BLEU-4 in [0, 1]
  double loss = 0;                 // teacher-forced cross-entropy per target word
  double token_accuracy = 0;       // teacher-forced next-word accuracy
  std::vector<std::string> mistakes;  // "english => produced (expected: reference)", a few
  double exact_match() const { return n ? static_cast<double>(exact) / n : 0.0; }
};

// Decodes `pairs` (greedily when beam is 1, else beam search per sentence with the given length
// penalty α), batched, in eval mode without a graph; `limit` > 0 evaluates only the first
// `limit` pairs.
TranslationEval evaluate_translation(nn::Seq2SeqTransformer& model,
                                     const std::vector<TranslationPair>& pairs,
                                     const TranslateRunConfig& run, std::int64_t beam = 1,
                                     std::int64_t limit = 0, double length_penalty = 0);

// What a uwaga-translate run trains, and how: the model from the run's seed; the training pairs
// batched for teacher forcing (data/translation/translation_batches.h); cross-entropy over the target words,
// padding ignored, with the run's label smoothing; AdamW with β2 = 0.98 and ε = 1e-9 as in
// "Attention Is All You Need", weight decay on the weights only; warm-up + cosine; after every
// epoch the validation split's loss, token accuracy, exact match and BLEU (of its first eval_size
// sentences). The run's vocabularies must be built (build_vocabularies).
class TranslateTraining : public Training<TranslateRunConfig, nn::Seq2SeqTransformer,
                                           TranslationBatches, nn::CrossEntropyLoss> {
 public:
  // `corpus` must outlive this object. `options`: the run's files, budget, threads and log; the
  // configuration, seed, clipping and epochs come from `run`.
  TranslateTraining(const TranslateRunConfig& run, const TranslationCorpus& corpus,
                    optim::TrainerOptions options);

 private:
  std::map<std::string, double> evaluate() override;
  const TranslationCorpus& corpus_;
};

}  // namespace uwaga::apps
