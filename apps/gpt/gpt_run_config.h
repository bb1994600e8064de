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

// The model file a run started from (--init): a Hugging Face GPT-2 model.safetensors or a
// uwaga-gpt checkpoint, as it was when the run began. Empty for a run from random weights.
struct GptInit {
  std::string file;      // absolute and canonical
  std::int64_t bytes = 0;
  std::string sha256;    // of its bytes (core/sha256.h)

  bool empty() const { return file.empty(); }
  bool operator==(const GptInit&) const = default;
  template <class Field>
  static void fields(Field&& field) {
    field("file", &GptInit::file);
    field("bytes", &GptInit::bytes);
    field("sha256", &GptInit::sha256);
  }
};

struct GptRunConfig {
  std::string preset;
  std::string text = "data/cache/tinyshakespeare/input.txt";  // the corpus: 90 % train, 10 % valid
  nn::GptConfig model;  // vocab comes from the characters of the training text
  std::int64_t epochs = 4;
  std::int64_t steps_per_epoch = 250;  // an "epoch" is this many batches of random windows
  std::int64_t batch_size = 64;        // windows of model.context characters per step
  std::int64_t grad_accum = 1;  // batches of batch_size whose gradients make one step
  std::string precision = "fp32";  // of the matrix products: fp32 or bf16 (train_command.h)
  double lr = 1e-3;
  double min_lr = 1e-4;
  double weight_decay = 0.1;
  std::int64_t warmup = 100;  // optimizer steps of linear warm-up
  double label_smoothing = 0.0;
  double clip_norm = 1.0;
  std::int64_t eval_windows = 0;  // validation windows scored after each epoch (0: all)
  // Tokens per training and validation window (T); 0: the model's context. GPT-2 keeps its 1,024
  // positions while a fine-tune reads shorter windows.
  std::int64_t window = 0;
  double beta2 = 0.99;            // AdamW's β2 (β1 is 0.9)
  std::int64_t sample_every = 0;  // optimizer steps between the samples train prints; 0: none
  std::uint64_t seed = 0;         // initialisation, windows and dropout
  GptInit init;                   // the weights the run started from; empty: random (seed)
  // What the model reads (apps/gpt/gpt_tokens.h): "char", the characters of `vocab`; "bpe:N",
  // the tokens of `bpe`, learned from the training text; "gpt2", the tokens of `bpe` read from
  // GPT-2's vocabulary files (or another vocabulary in their form), <|endoftext|> in the text
  // read as that token.
  std::string tokenizer = "char";
  CharVocabulary vocab;
  // FNV-1a 64 of the text's bytes (16 hex digits) when the run began; in the JSON beside the
  // fields below (older runs have none). A resume compares it: the same path may hold another
  // text by then.
  std::string text_hash;
  BpeTokenizer bpe;

  std::int64_t window_length() const { return window > 0 ? window : model.context; }  // T

  std::string to_json() const;
  // to_json as the log's first record shows it: a BPE tokenizer's tables (GPT-2's 50,257 tokens
  // and 50,000 merges: about 1 MB) given by their sizes; the checkpoint keeps them whole.
  std::string to_log_json() const;
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
    field("window", &GptRunConfig::window);
    field("beta2", &GptRunConfig::beta2);
    field("sample_every", &GptRunConfig::sample_every);
    field("seed", &GptRunConfig::seed);
    field("init", &GptRunConfig::init);
    field("tokenizer", &GptRunConfig::tokenizer);
    field("vocab", &GptRunConfig::vocab);
    field("bpe", &GptRunConfig::bpe);
  }
};

// A --text path as a run records it (path_for_run, apps/common/run_path.h): absolute and
// canonical; refused when empty or not UTF-8.
std::string text_path_for_run(const std::string& typed);

// The run's text, read whole (read_text_file). A new run records its path (text_path_for_run)
// and text_hash; otherwise, when the run has a text_hash, the text must still have it.
std::string read_run_text(GptRunConfig& run, bool new_run);

// N of --tokenizer bpe:N (1 ≤ N ≤ 100000), 0 for char; fails naming --tokenizer for anything else.
std::int64_t bpe_merges_of(const std::string& tokenizer);
// True for a --tokenizer that names vocabulary files: "gpt2" (data/cache/gpt2-tokenizer) or a
// directory, as opposed to char and bpe:N.
bool names_tokenizer_files(const std::string& tokenizer);

// The record of an --init file: its canonical path, size and SHA-256; fails naming --init when it
// is not a readable regular file.
GptInit init_record(const std::string& typed);

// The bytes each token id of the run's tokenizer stands for (1 for each character): what turns a
// loss per token into bits per character.
std::vector<std::int64_t> token_lengths(const GptRunConfig& run);

// The named presets; throws an Error listing the valid names for an unknown one.
GptRunConfig gpt_preset(const std::string& name);
std::vector<std::string> gpt_preset_names();
// Epochs between a run's checkpoints when --save-every is not given: 1, but gpt2-shakespeare's
// epochs of 10 steps take ~17 s, its checkpoint of GPT-2 and Adam's moments (1.5 GB) ~6 s to
// write, so the demo writes only its last (llm.c's writes none).
std::int64_t gpt_save_every(const GptRunConfig& run);

}  // namespace uwaga::apps
