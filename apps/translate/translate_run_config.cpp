#include "apps/translate/translate_run_config.h"

#include "core/error.h"
#include "core/json_fields.h"

namespace uwaga::apps {
namespace {

// Marks the JSON as a uwaga-translate run configuration.
const char* const kFormat = "uwaga-translate-1";

}  // namespace

std::vector<std::string> translate_preset_names() { return {"default", "tiny"}; }

void build_vocabularies(TranslateRunConfig& run, const TranslationCorpus& corpus) {
  std::vector<std::string> english, spanish;
  for (const auto& p : corpus.train) english.push_back(p.english), spanish.push_back(p.spanish);
  run.src_vocab = Vocabulary::build(english);
  run.tgt_vocab = Vocabulary::build(spanish);
  run.model.src_vocab = run.src_vocab.size();
  run.model.tgt_vocab = run.tgt_vocab.size();
}

TranslateRunConfig translate_preset(const std::string& name) {
  TranslateRunConfig r;
  r.preset = name;
  r.model.max_length = 32;  // the longest sentences have 13 English words
  if (name == "default") {
    // Meets the targets (>= 95 % exact match, BLEU >= 0.95 on unseen subject-verb-object
    // triples) in under 15 minutes on two cores; see apps/bench/translate_bench.sh.
    r.corpus.train_size = 20000, r.corpus.valid_size = 1000, r.corpus.test_size = 1000;
    r.model.dim = 128, r.model.heads = 4, r.model.mlp_dim = 256;
    r.model.encoder_layers = 2, r.model.decoder_layers = 2;
    r.model.positions = "sinusoidal", r.model.dropout = 0.1;
    r.epochs = 8, r.batch_size = 64, r.lr = 1e-3, r.warmup = 300;
    r.weight_decay = 0.01, r.label_smoothing = 0.1, r.clip_norm = 1.0, r.eval_size = 500;
  } else if (name == "tiny") {
    // For smoke tests: a few seconds per few dozen steps, learns something, not much.
    r.corpus.train_size = 2000, r.corpus.valid_size = 100, r.corpus.test_size = 100;
    r.model.dim = 32, r.model.heads = 2, r.model.mlp_dim = 64;
    r.model.encoder_layers = 1, r.model.decoder_layers = 1;
    r.model.positions = "sinusoidal", r.model.dropout = 0.0;
    r.epochs = 2, r.batch_size = 32, r.lr = 3e-3, r.warmup = 10;
    r.weight_decay = 0.0, r.label_smoothing = 0.0, r.clip_norm = 1.0, r.eval_size = 50;
  } else {
    std::string names;
    for (const auto& n : translate_preset_names()) names += (names.empty() ? "" : ", ") + n;
    fail("unknown preset '", name, "'; expected one of: ", names);
  }
  return r;
}

void TranslateRunConfig::validate() const {
  model.validate();
  if (corpus.train_size < 1) fail("--train-size must be at least 1, got ", corpus.train_size);
  if (corpus.valid_size < 1) fail("--valid-size must be at least 1, got ", corpus.valid_size);
  if (corpus.test_size < 1) fail("--test-size must be at least 1, got ", corpus.test_size);
  // Every held-out sentence is translated word by word, each word a pass over the sentence so
  // far: 800,000 took minutes before a single step.
  constexpr std::int64_t kMaxHeldOut = 100000;
  if (corpus.valid_size > kMaxHeldOut || corpus.test_size > kMaxHeldOut)
    fail("--valid-size and --test-size may be at most ", kMaxHeldOut, " sentences, got ",
         corpus.valid_size, " and ", corpus.test_size);
  check_training_settings(*this);
  if (eval_size < 0) fail("--eval-size must be >= 0, got ", eval_size);
}

std::string TranslateRunConfig::to_json() const {
  nlohmann::json j = fields_to_json(*this);
  j["format"] = kFormat;
  return j.dump();
}

TranslateRunConfig TranslateRunConfig::from_json(const std::string& text) {
  const char* what = "the run configuration";
  nlohmann::json j = parse_json_input(text, what);
  complete_older_training_settings(j);
  if (!j.is_object() || !j.contains("format") || j.at("format") != kFormat)
    fail("no \"format\": \"", kFormat, "\" in its configuration");
  TranslateRunConfig r;
  fields_from_json(j, r, what);
  // The limits a new run has hold for the checkpoint's values too: a test_size of 800,000
  // translated for hours in `eval`.
  r.validate();
  if (r.model.src_vocab != r.src_vocab.size() || r.model.tgt_vocab != r.tgt_vocab.size())
    fail("the run configuration's vocabularies (", r.src_vocab.size(), ", ", r.tgt_vocab.size(),
         " words) do not match its model (", r.model.src_vocab, ", ", r.model.tgt_vocab, ")");
  return r;
}

}  // namespace uwaga::apps
