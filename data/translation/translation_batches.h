#pragma once
// The translator's training batches: sentence pairs as ids, batched for teacher forcing. The
// decoder reads the target shifted right and predicts it shifted left:
//
//   target "BOS y_1 … y_T EOS"  →  decoder input "BOS y_1 … y_T", targets "y_1 … y_T EOS"
//
// each padded to the batch's longest (PAD, which the loss ignores). An epoch shuffles the pairs
// with (seed, epoch), sorts them by length within windows of 50 batches (less padding), and
// shuffles the batches' order again.
#include <cstdint>
#include <string>
#include <vector>

#include "data/batch_source.h"
#include "data/translation/translation_corpus.h"
#include "data/translation/vocabulary.h"

namespace uwaga {

// One sentence pair as ids: source "w_1 … w_S EOS", target "BOS y_1 … y_T EOS".
struct EncodedPair {
  std::vector<std::int64_t> source;
  std::vector<std::int64_t> target;
};

// The source ids of an English sentence ("w_1 … w_S EOS"); words outside the vocabulary become
// UNK and are listed in `unknown` when given.
std::vector<std::int64_t> encode_source(const std::string& english, const Vocabulary& vocab,
                                        std::vector<std::string>* unknown = nullptr);

// Every pair as ids; a pair longer than max_length positions is an error naming it.
std::vector<EncodedPair> encode_pairs(const std::vector<TranslationPair>& pairs,
                                      const Vocabulary& src_vocab, const Vocabulary& tgt_vocab,
                                      std::int64_t max_length);

// Pairs `index` of `pairs` as a batch: inputs {src (B, S), tgt_in (B, T)}, targets tgt_out
// (B, T) — PAD where a row has no word.
Batch make_translation_batch(const std::vector<EncodedPair>& pairs,
                             const std::vector<std::int64_t>& index, std::int64_t pad);

class TranslationBatches : public BatchSource {
 public:
  TranslationBatches(std::vector<EncodedPair> pairs, std::int64_t batch_size, std::uint64_t seed,
                     std::int64_t pad);

  std::int64_t batches_per_epoch() const override;  // the last, partial batch is dropped
  void begin_epoch(std::int64_t epoch) override;
  Batch batch(std::int64_t index) override;

  std::size_t pairs() const { return pairs_.size(); }

 private:
  std::vector<EncodedPair> pairs_;
  std::int64_t batch_size_;
  std::uint64_t seed_;
  std::int64_t pad_;
  std::vector<std::vector<std::int64_t>> batches_;  // indices into pairs_, for this epoch
};

}  // namespace uwaga
