#pragma once
// Everything a uwaga-gpt training run is made of: the text, the model, the optimisation, and the
// character vocabulary built from the training text. It travels in the checkpoint's metadata as
// JSON, so `eval` and `sample` can rebuild the model and its characters. Flags override preset
// fields one by one.
#include <string>
#include <vector>

#include "apps/common/training_settings_json.h"
#include "data/text/bpe_tokenizer.h"
#include "data/text/char_corpus.h"
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
  // What the model reads (apps/gpt/gpt_tokens.h): "char", the characters of `vocab`; "bpe:N",
  // the tokens of `bpe`, learned from the training text; "gpt2", GPT-2's (an imported checkpoint,
  // never saved in one).
  std::string tokenizer = "char";
  CharVocabulary vocab;
  // FNV-1a 64 of the text's bytes (16 hex digits) when the run began; in the JSON beside the
  // fields below (older runs have none). A resume compares it: the same path may hold another
  // text by then.
  std::string text_hash;
  BpeTokenizer bpe;

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
    field("tokenizer", &GptRunConfig::tokenizer);
    field("vocab", &GptRunConfig::vocab);
    field("bpe", &GptRunConfig::bpe);
  }
};

// A --text path as a run records it: absolute and canonical (symlinks resolved) as far as it
// exists, so a resume from another directory finds the file and the same file named another way
// is the same setting; refused when it is not UTF-8 (run.json holds it).
std::string text_path_for_run(const std::string& typed);

// The run's text, read whole (read_text_file). A new run records its path (text_path_for_run)
// and text_hash; otherwise, when the run has a text_hash, the text must still have it.
std::string read_run_text(GptRunConfig& run, bool new_run);

// N of --tokenizer bpe:N (1 ≤ N ≤ 100000), 0 for char; fails naming --tokenizer for anything else.
std::int64_t bpe_merges_of(const std::string& tokenizer);

// The bytes each token id of the run's tokenizer stands for (1 for each character): what turns a
// loss per token into bits per character.
std::vector<std::int64_t> token_lengths(const GptRunConfig& run);

// The named presets; throws an Error listing the valid names for an unknown one.
GptRunConfig gpt_preset(const std::string& name);
std::vector<std::string> gpt_preset_names();

}  // namespace uwaga::apps
