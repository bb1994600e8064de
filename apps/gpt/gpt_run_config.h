#pragma once
// Everything a uwaga-gpt training run is made of: the text, the model, the optimisation, and the
// character vocabulary built from the training text. It travels in the checkpoint's metadata as
// JSON, so `eval` and `sample` can rebuild the model and its characters. Flags override preset
// fields one by one.
#include <string>
#include <vector>

#include "apps/common/training_settings_json.h"
#include "data/char_corpus.h"
#include "nn/gpt.h"

namespace uwaga::apps {

struct GptRunConfig {
  std::string preset;
  std::string text = "data/cache/tinyshakespeare/input.txt";  // the corpus: 90 % train, 10 % valid
  nn::GptConfig model;  // vocab comes from the characters of the training text
  std::int64_t epochs = 4;
  std::int64_t steps_per_epoch = 250;  // an "epoch" is this many batches of random windows
  std::int64_t batch_size = 64;        // windows of model.context characters per step
  double lr = 1e-3;
  double min_lr = 1e-4;
  double weight_decay = 0.1;
  std::int64_t warmup = 100;  // optimizer steps of linear warm-up
  double label_smoothing = 0.0;
  double clip_norm = 1.0;
  std::int64_t eval_windows = 0;  // validation windows scored after each epoch (0: all)
  std::uint64_t seed = 0;         // initialisation, windows and dropout
  CharVocabulary vocab;

  std::string to_json() const;
  static GptRunConfig from_json(const std::string& json);
  // Throws an Error naming the flag when a value cannot work.
  void validate() const;

  // The JSON fields, one list for to_json and from_json (core/json_fields.h); the JSON also
  // holds "format": "uwaga-gpt-1".
  template <class Field>
  static void fields(Field&& field) {
    field("preset", &GptRunConfig::preset);
    field("text", &GptRunConfig::text);
    field("model", &GptRunConfig::model);
    training_settings_fields<GptRunConfig>(field);
    field("steps_per_epoch", &GptRunConfig::steps_per_epoch);
    field("eval_windows", &GptRunConfig::eval_windows);
    field("seed", &GptRunConfig::seed);
    field("vocab", &GptRunConfig::vocab);
  }
};

// The named presets; throws an Error listing the valid names for an unknown one.
GptRunConfig gpt_preset(const std::string& name);
std::vector<std::string> gpt_preset_names();

}  // namespace uwaga::apps
