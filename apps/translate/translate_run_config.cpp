#include "apps/translate/translate_run_config.h"

#include <nlohmann/json.hpp>

#include "apps/common/training_settings_json.h"
#include "core/error.h"

namespace uwaga::apps {

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
  check_training_settings(*this);
  if (eval_size < 0) fail("--eval-size must be >= 0, got ", eval_size);
}

std::string TranslateRunConfig::to_json() const {
  nlohmann::json j = {
      {"format", "uwaga-translate-1"},
      {"preset", preset},
      {"corpus",
       {{"seed", corpus.seed},
        {"train_size", corpus.train_size},
        {"valid_size", corpus.valid_size},
        {"test_size", corpus.test_size},
        {"valid_fraction", corpus.valid_fraction},
        {"test_fraction", corpus.test_fraction}}},
      {"model", nlohmann::json::parse(model.to_json())},
      {"eval_size", eval_size},
      {"seed", seed},
      {"src_vocab", nlohmann::json::parse(src_vocab.to_json())},
      {"tgt_vocab", nlohmann::json::parse(tgt_vocab.to_json())}};
  training_settings_to_json(*this, j);
  return j.dump();
}

TranslateRunConfig TranslateRunConfig::from_json(const std::string& text) {
  TranslateRunConfig r;
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.value("format", "") != "uwaga-translate-1")
      fail("no \"format\": \"uwaga-translate-1\" in its configuration");
    r.preset = j.at("preset");
    const auto& c = j.at("corpus");
    r.corpus.seed = c.at("seed");
    r.corpus.train_size = c.at("train_size");
    r.corpus.valid_size = c.at("valid_size");
    r.corpus.test_size = c.at("test_size");
    r.corpus.valid_fraction = c.at("valid_fraction");
    r.corpus.test_fraction = c.at("test_fraction");
    r.model = nn::Seq2SeqConfig::from_json(j.at("model").dump());
    training_settings_from_json(j, r);
    r.eval_size = j.at("eval_size");
    r.seed = j.at("seed");
    r.src_vocab = Vocabulary::from_json(j.at("src_vocab").dump());
    r.tgt_vocab = Vocabulary::from_json(j.at("tgt_vocab").dump());
  } catch (const nlohmann::json::exception& e) {
    fail("the run configuration cannot be read: ", e.what());
  }
  if (r.model.src_vocab != r.src_vocab.size() || r.model.tgt_vocab != r.tgt_vocab.size())
    fail("the run configuration's vocabularies (", r.src_vocab.size(), ", ", r.tgt_vocab.size(),
         " words) do not match its model (", r.model.src_vocab, ", ", r.model.tgt_vocab, ")");
  return r;
}

}  // namespace uwaga::apps
