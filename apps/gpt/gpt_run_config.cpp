#include "apps/gpt/gpt_run_config.h"

#include <charconv>
#include <cstdio>
#include <filesystem>

#include "apps/common/run_path.h"
#include "core/error.h"
#include "core/json_fields.h"
#include "core/sha256.h"

namespace uwaga::apps {
namespace {

// Marks the JSON as a uwaga-gpt run configuration.
const char* const kFormat = "uwaga-gpt-1";

// FNV-1a, 64 bits, as 16 hex digits: a fingerprint of a text (not a defence against forgery).
std::string fnv1a_hex(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

}  // namespace

std::int64_t bpe_merges_of(const std::string& tokenizer) {
  if (tokenizer == "char") return 0;
  std::int64_t n = 0;
  const char* end = tokenizer.c_str() + tokenizer.size();
  if (tokenizer.rfind("bpe:", 0) != 0 || tokenizer.size() == 4 ||
      std::from_chars(tokenizer.c_str() + 4, end, n).ptr != end || n < 1 || n > 100000)
    fail("--tokenizer must be char or bpe:N with N merges from 1 to 100000 (bpe:256 learns 256 "
         "tokens beyond the 256 bytes), got '", tokenizer, "'");
  return n;
}

bool names_tokenizer_files(const std::string& tokenizer) {
  return tokenizer != "char" && tokenizer.rfind("bpe:", 0) != 0;
}

GptInit init_record(const std::string& typed) {
  if (typed.empty()) fail("--init must name a model file");
  namespace fs = std::filesystem;
  GptInit init;
  init.file = path_for_run("--init", typed);
  const std::string where = "--init '" + typed + "'";
  init.sha256 = sha256_of_file(init.file, where);
  init.bytes = static_cast<std::int64_t>(fs::file_size(init.file));
  return init;
}

std::vector<std::int64_t> token_lengths(const GptRunConfig& run) {
  if (run.tokenizer == "char") return std::vector<std::int64_t>(run.vocab.size(), 1);
  std::vector<std::int64_t> lengths(run.bpe.size());
  for (std::int64_t id = 0; id < run.bpe.size(); ++id)
    lengths[id] = static_cast<std::int64_t>(run.bpe.token(id).size());
  return lengths;
}

std::vector<std::string> gpt_preset_names() {
  return {"shakespeare-tiny", "shakespeare-small", "gpt2-shakespeare", "gpt2-shakespeare-long",
          "smoke"};
}

std::int64_t gpt_save_every(const GptRunConfig& run) {
  return run.preset == "gpt2-shakespeare" ? run.epochs : 1;
}

GptRunConfig gpt_preset(const std::string& name) {
  GptRunConfig r;
  r.preset = name;
  r.model.vocab = 1;  // until the vocabulary is built from the text
  if (name == "shakespeare-tiny") {
    // About 0.8 M parameters, trained for a fixed budget of steps: it is far from converged, so
    // no dropout, a high learning rate and one validation at the end (one "epoch"). See
    // apps/bench/gpt_targets.sh and the README for its loss and time.
    r.model.context = 64, r.model.dim = 128, r.model.layers = 4, r.model.heads = 4;
    r.model.mlp_dim = 512, r.model.dropout = 0.0;
    r.epochs = 1, r.steps_per_epoch = 1000, r.batch_size = 32;
    r.lr = 3e-3, r.min_lr = 1e-4, r.warmup = 50, r.weight_decay = 0.1;
  } else if (name == "shakespeare-small") {
    // About 2.7 M parameters, for a longer run.
    r.model.context = 128, r.model.dim = 192, r.model.layers = 6, r.model.heads = 6;
    r.model.mlp_dim = 768, r.model.dropout = 0.1;
    r.epochs = 10, r.steps_per_epoch = 500, r.batch_size = 64;
    r.lr = 1e-3, r.min_lr = 1e-4, r.warmup = 200, r.weight_decay = 0.1;
  } else if (name == "gpt2-shakespeare") {
    // llm.c's train_gpt2.c demo: GPT-2 (--init) fine-tuned on Shakespeare with its own tokens,
    // B 4, T 64, AdamW lr 1e-4 (β2 0.999, no weight decay, no schedule), 40 steps, the
    // validation loss every 10 steps (over 5 batches of 4 windows) and a sample every 20.
    r.tokenizer = "gpt2", r.window = 64;
    r.epochs = 4, r.steps_per_epoch = 10, r.batch_size = 4, r.eval_windows = 20;
    r.lr = 1e-4, r.min_lr = 1e-4, r.warmup = 0, r.weight_decay = 0.0, r.beta2 = 0.999;
    r.clip_norm = 0.0, r.sample_every = 20;
  } else if (name == "gpt2-shakespeare-long") {
    // nanoGPT's finetune_shakespeare (constant lr 3e-5, β2 0.95, weight decay 0.1, clipping at
    // 1, a batch of 1 window of 1,024 tokens with 32 accumulated a step, for 20 steps) scaled to
    // two cores: 4 windows of 256 tokens with 4 accumulated (16 a step) for 100 steps, the
    // validation loss every 10 over 40 windows.
    r.tokenizer = "gpt2", r.window = 256;
    r.epochs = 10, r.steps_per_epoch = 10, r.batch_size = 4, r.grad_accum = 4, r.eval_windows = 40;
    r.lr = 3e-5, r.min_lr = 3e-5, r.warmup = 0, r.weight_decay = 0.1, r.beta2 = 0.95;
    r.clip_norm = 1.0, r.sample_every = 50;
  } else if (name == "smoke") {
    // For smoke tests: a few seconds, learns something, not much.
    r.model.context = 16, r.model.dim = 32, r.model.layers = 1, r.model.heads = 2;
    r.model.mlp_dim = 64, r.model.dropout = 0.0;
    r.epochs = 2, r.steps_per_epoch = 20, r.batch_size = 16;
    r.lr = 3e-3, r.min_lr = 3e-4, r.warmup = 5, r.weight_decay = 0.0, r.eval_windows = 200;
  } else {
    std::string names;
    for (const auto& n : gpt_preset_names()) names += (names.empty() ? "" : ", ") + n;
    fail("unknown preset '", name, "'; expected one of: ", names);
  }
  return r;
}

void GptRunConfig::validate() const {
  model.validate();
  check_training_settings(*this);
  // With --epochs up to 10^6, the step count stays far from overflowing (and from running for ever).
  if (steps_per_epoch < 1 || steps_per_epoch > 1'000'000'000)
    fail("--steps-per-epoch must be from 1 to 1,000,000,000, got ", steps_per_epoch);
  if (eval_windows < 0) fail("--eval-windows must be >= 0 (0: all), got ", eval_windows);
  if (text.empty()) fail("--text must name a text file");
  if (tokenizer != "gpt2") bpe_merges_of(tokenizer);
  if (window < 0 || window > model.context)
    fail("--window must be from 1 to the model's context of ", model.context, " (0: all of it), "
         "got ", window);
  if (!(beta2 >= 0 && beta2 < 1)) fail("--beta2 must be in [0, 1), got ", beta2);
  if (sample_every < 0) fail("--sample-every must be >= 0 (0: no samples), got ", sample_every);
}

std::string GptRunConfig::to_json() const {
  nlohmann::json j = fields_to_json(*this);
  j["format"] = kFormat;
  if (!text_hash.empty()) j["text_hash"] = text_hash;
  return j.dump();
}

std::string GptRunConfig::to_log_json() const {
  nlohmann::json j = nlohmann::json::parse(to_json());
  if (tokenizer != "char")
    j["bpe"] = {{"tokens", bpe.size()}, {"merges", bpe.merge_count()},
                {"tables", "in the checkpoint's configuration"}};
  return j.dump();
}

std::string text_path_for_run(const std::string& typed) {
  if (typed.empty()) fail("--text must name a text file");
  return path_for_run("--text", typed);
}

std::string read_run_text(GptRunConfig& run, bool new_run) {
  if (new_run) run.text = text_path_for_run(run.text);
  std::string text = read_text_file(run.text);
  const std::string hash = fnv1a_hex(text);
  if (new_run) {
    run.text_hash = hash;
  } else if (!run.text_hash.empty() && hash != run.text_hash) {
    fail("the text '", run.text, "' has changed since the run began (FNV-1a ", hash, ", was ",
         run.text_hash, "); give the run its text back, or train a new run");
  }
  return text;
}

GptRunConfig GptRunConfig::from_json(const std::string& json) {
  const char* what = "the run configuration";
  nlohmann::json j = parse_json_input(json, what);
  complete_older_training_settings(j);
  if (!j.is_object() || !j.contains("format") || j.at("format") != kFormat)
    fail("no \"format\": \"", kFormat, "\" in its configuration");
  // Checkpoints written before the BPE tokenizer and GPT-2's GELU: characters and exact GELU.
  if (!j.contains("tokenizer")) j["tokenizer"] = "char";
  if (!j.contains("bpe")) j["bpe"] = nlohmann::json{{"merges", nlohmann::json::array()}};
  // Written before fine-tuning (window, β2, samples, --init): as those runs trained.
  const nlohmann::json defaults = {{"window", 0}, {"beta2", 0.99}, {"sample_every", 0},
                                   {"init", fields_to_json(GptInit{})}};
  for (const auto& [key, value] : defaults.items())
    if (!j.contains(key)) j[key] = value;
  if (j.contains("model") && j["model"].is_object() && !j["model"].contains("gelu"))
    j["model"]["gelu"] = "erf";
  GptRunConfig r;
  fields_from_json(j, r, what);
  if (j.contains("text_hash")) {
    const nlohmann::json& h = j.at("text_hash");
    if (!h.is_string() || h.get<std::string>().size() != 16 ||
        h.get<std::string>().find_first_not_of("0123456789abcdef") != std::string::npos)
      fail(what, ": \"text_hash\" should be 16 hexadecimal digits, got ", json_brief(h));
    r.text_hash = h.get<std::string>();
  }
  r.validate();
  const bool chars = r.tokenizer == "char";
  const std::int64_t size = chars ? r.vocab.size() : r.bpe.size();
  if (r.model.vocab != size)
    fail("the run configuration's vocabulary (", size, chars ? " characters" : " tokens",
         ") does not match its model (", r.model.vocab, ")");
  return r;
}

}  // namespace uwaga::apps
