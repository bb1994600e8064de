#pragma once
// What the trainer trains in uwaga-translate: a Seq2SeqTransformer on the toy English -> Spanish
// corpus with teacher forcing (the decoder reads the target shifted right, BOS y_1 … y_{T−1}, and
// predicts y_1 … y_T EOS) and cross-entropy that ignores padding; and the evaluation shared by
// `train` and `eval`: greedy (or beam) decoding, exact match and corpus BLEU-4.
#include <map>
#include <string>
#include <vector>

#include "apps/translate/translate_run_config.h"
#include "nn/decoding.h"
#include "optim/data_parallel.h"
#include "optim/trainer.h"

namespace uwaga::apps {

// Sentence pairs per forward/backward pass in uwaga-translate's training (optim::DataParallel's
// micro_batch): the default preset trains as fast as with whole shares (3,887 against 3,805
// sentences/s on two cores) and holds less memory (peak RSS 44 against 73 MB on one thread, 60
// against 75 MB on two; uwaga-bench --mode translate --micro-batch N).
constexpr std::int64_t kTranslateMicroBatch = 16;

// One sentence pair as ids: source "w_1 … w_S EOS", target "BOS y_1 … y_T EOS".
struct EncodedPair {
  std::vector<std::int64_t> source;
  std::vector<std::int64_t> target;
};

// Teacher forcing: "BOS y_1 … y_T EOS" gives the decoder input "BOS y_1 … y_T" and the
// targets "y_1 … y_T EOS", each padded to the batch's longest.
struct TranslationBatch {
  Tensor src;      // (B, S)
  Tensor tgt_in;   // (B, T)
  Tensor tgt_out;  // (B·T,) the word each position should predict; PAD where there is none
};

std::vector<EncodedPair> encode_pairs(const std::vector<TranslationPair>& pairs,
                                      const TranslateRunConfig& run);
// The source ids of an English sentence ("w_1 … w_S EOS"); words outside the vocabulary become
// UNK and are listed in `unknown` when given.
std::vector<std::int64_t> encode_source(const std::string& english, const Vocabulary& vocab,
                                        std::vector<std::string>* unknown = nullptr);

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

class TranslationTask : public optim::TrainTask {
 public:
  // Each training step runs one replica of the model per thread (parallel.threads; 0: all of
  // uwaga's threads), each on its share of the batch's sentences in micro-batches of at most
  // parallel.micro_batch sentences (optim::DataParallel).
  TranslationTask(nn::Seq2SeqTransformer& model, const TranslationCorpus& corpus,
                  const TranslateRunConfig& run, optim::DataParallelOptions parallel = {});

  nn::Module& model() override { return model_; }
  std::int64_t batches_per_epoch() const override;
  // Shuffles the pairs with (seed, epoch), then forms batches of similar lengths: within
  // windows of 50 batches the pairs are sorted by length (less padding), and the batches'
  // order is shuffled again.
  void begin_epoch(std::int64_t epoch) override;
  // Forward and loss of batch `index` on the model alone (train_step splits it across replicas).
  optim::StepResult train_batch(std::int64_t index) override;
  // Forward, loss and backward of batch `index`, the sentences dealt out to the replicas. The loss
  // is a mean over target words, so each micro-batch's share is its words over the batch's.
  optim::StepResult train_step(std::int64_t index) override;
  // Batch `index` of the current epoch, as train_batch feeds it to the model.
  TranslationBatch batch(std::int64_t index) const;
  // Metrics on the validation split (unseen triples): teacher-forced loss and token accuracy,
  // and exact match and BLEU of greedy translations of its first eval_size sentences.
  std::map<std::string, double> evaluate() override;
  std::string eval_split() const override { return "valid"; }  // test stays unseen until eval
  std::string config_json() const override { return run_.to_json(); }
  // The generator of the dropout seeds, so a resumed run draws the same masks. Every training
  // step draws one seed; the micro-batch of rows [b, e) uses masks from (that seed, b), whichever
  // replica runs it.
  std::string save_state() const override;
  void load_state(const std::string& state) override;

 private:
  // Forward, loss, word count and correct predictions of a batch on `model` (or a replica).
  optim::StepResult loss_on(nn::Seq2SeqTransformer& model, const TranslationBatch& b) const;

  nn::Seq2SeqTransformer& model_;
  const TranslationCorpus& corpus_;
  TranslateRunConfig run_;
  std::vector<EncodedPair> train_;
  std::vector<std::vector<std::int64_t>> batches_;  // indices into train_, for this epoch
  optim::DataParallel<nn::Seq2SeqTransformer> parallel_;
  Generator dropout_seeds_;
};

}  // namespace uwaga::apps
