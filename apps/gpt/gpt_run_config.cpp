#include "apps/gpt/gpt_run_config.h"

#include <charconv>
#include <cstdio>
#include <filesystem>

#include "apps/common/printable_text.h"
#include "core/error.h"
#include "core/json_fields.h"

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

std::vector<std::int64_t> token_lengths(const GptRunConfig& run) {
  if (run.tokenizer == "char") return std::vector<std::int64_t>(run.vocab.size(), 1);
  std::vector<std::int64_t> lengths(run.bpe.size());
  for (std::int64_t id = 0; id < run.bpe.size(); ++id)
    lengths[id] = static_cast<std::int64_t>(run.bpe.token(id).size());
  return lengths;
}

std::vector<std::string> gpt_preset_names() {
  return {"shakespeare-tiny", "shakespeare-small", "smoke"};
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
  if (steps_per_epoch < 1) fail("--steps-per-epoch must be at least 1, got ", steps_per_epoch);
  if (eval_windows < 0) fail("--eval-windows must be >= 0 (0: all), got ", eval_windows);
  if (text.empty()) fail("--text must name a text file");
  if (tokenizer != "gpt2") bpe_merges_of(tokenizer);
}

std::string GptRunConfig::to_json() const {
  nlohmann::json j = fields_to_json(*this);
  j["format"] = kFormat;
  if (!text_hash.empty()) j["text_hash"] = text_hash;
  return j.dump();
}

std::string text_path_for_run(const std::string& typed) {
  if (typed.empty()) fail("--text must name a text file");
  require_utf8_path("--text", typed);
  namespace fs = std::filesystem;
  const std::string path = fs::weakly_canonical(fs::absolute(typed)).string();
  require_utf8_path("--text", path);  // a link may lead elsewhere
  return path;
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
  if (!j.is_object() || !j.contains("format") || j.at("format") != kFormat)
    fail("no \"format\": \"", kFormat, "\" in its configuration");
  // Checkpoints written before the BPE tokenizer and GPT-2's GELU: characters and exact GELU.
  if (!j.contains("tokenizer")) j["tokenizer"] = "char";
  if (!j.contains("bpe")) j["bpe"] = nlohmann::json{{"merges", nlohmann::json::array()}};
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
  r.model.validate();
  bpe_merges_of(r.tokenizer);
  const bool chars = r.tokenizer == "char";
  const std::int64_t size = chars ? r.vocab.size() : r.bpe.size();
  if (r.model.vocab != size)
    fail("the run configuration's vocabulary (", size, chars ? " characters" : " tokens",
         ") does not match its model (", r.model.vocab, ")");
  return r;
}

}  // namespace uwaga::apps
