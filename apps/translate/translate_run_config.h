#pragma once
// Everything a uwaga-translate training run is made of: the corpus, the model, the optimisation,
// and the two vocabularies built from the training sentences. It travels in the checkpoint's
// metadata as JSON, so `eval` and `translate` can rebuild the model and the test split exactly.
// Flags override preset fields one by one.
#include <string>
#include <vector>

#include "apps/common/training_settings_json.h"
#include "data/translation/translation_corpus.h"
#include "data/translation/vocabulary.h"
#include "nn/seq2seq_transformer.h"

namespace uwaga::apps {

struct TranslateRunConfig {
  std::string preset;
  TranslationCorpusOptions corpus;  // the corpus seed fixes the split; sizes per split
  nn::Seq2SeqConfig model;          // src_vocab / tgt_vocab come from the vocabularies
  std::int64_t epochs = 10;
  std::int64_t batch_size = 64;
  std::int64_t grad_accum = 1;  // batches of batch_size whose gradients make one step
  std::string precision = "fp32";  // of the matrix products: fp32 or bf16 (train_command.h)
  double lr = 1e-3;
  double min_lr = 1e-5;
  double weight_decay = 0.01;
  std::int64_t warmup = 300;  // optimizer steps of linear warm-up
  double label_smoothing = 0.1;
  double clip_norm = 1.0;
  std::int64_t eval_size = 500;  // valid sentences decoded (greedily) after each epoch
  std::uint64_t seed = 0;        // initialisation, shuffling and dropout
  Vocabulary src_vocab, tgt_vocab;  // English, Spanish

  std::string to_json() const;
  static TranslateRunConfig from_json(const std::string& json);
  // Throws an Error naming the flag when a value cannot work.
  void validate() const;

  // The JSON fields, one list for to_json and from_json (core/json_fields.h); the JSON also
  // holds "format": "uwaga-translate-1".
  template <class Field>
  static void fields(Field&& field) {
    field("preset", &TranslateRunConfig::preset);
    field("corpus", &TranslateRunConfig::corpus);
    field("model", &TranslateRunConfig::model);
    training_settings_fields<TranslateRunConfig>(field);
    field("eval_size", &TranslateRunConfig::eval_size);
    field("seed", &TranslateRunConfig::seed);
    field("src_vocab", &TranslateRunConfig::src_vocab);
    field("tgt_vocab", &TranslateRunConfig::tgt_vocab);
  }
};

// The vocabularies of the corpus's training sentences (English, Spanish), and the model's vocabulary
// sizes from them.
void build_vocabularies(TranslateRunConfig& run, const TranslationCorpus& corpus);

// The named presets; throws an Error listing the valid names for an unknown one.
TranslateRunConfig translate_preset(const std::string& name);
std::vector<std::string> translate_preset_names();

}  // namespace uwaga::apps
