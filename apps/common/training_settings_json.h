#pragma once
// The optimisation settings both programs' run configurations (VitRunConfig, TranslateRunConfig)
// have under the same names, as fields of the JSON that travels in a checkpoint: epochs,
// batch_size, lr, min_lr, weight_decay, warmup, label_smoothing and clip_norm. Header-only: the
// Python bindings compile the apps' run configurations without the uwaga_apps_common library.
#include <nlohmann/json.hpp>

namespace uwaga::apps {

template <class RunConfig>
void training_settings_to_json(const RunConfig& run, nlohmann::json& j) {
  j["epochs"] = run.epochs;
  j["batch_size"] = run.batch_size;
  j["lr"] = run.lr;
  j["min_lr"] = run.min_lr;
  j["weight_decay"] = run.weight_decay;
  j["warmup"] = run.warmup;
  j["label_smoothing"] = run.label_smoothing;
  j["clip_norm"] = run.clip_norm;
}

// Throws nlohmann::json::exception naming the first field that is missing or of the wrong type.
template <class RunConfig>
void training_settings_from_json(const nlohmann::json& j, RunConfig& run) {
  run.epochs = j.at("epochs");
  run.batch_size = j.at("batch_size");
  run.lr = j.at("lr");
  run.min_lr = j.at("min_lr");
  run.weight_decay = j.at("weight_decay");
  run.warmup = j.at("warmup");
  run.label_smoothing = j.at("label_smoothing");
  run.clip_norm = j.at("clip_norm");
}

}  // namespace uwaga::apps
