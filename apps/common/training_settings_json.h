#pragma once
// The optimisation settings both programs' run configurations (VitRunConfig, TranslateRunConfig)
// have under the same names, as fields of the JSON that travels in a checkpoint: epochs,
// batch_size, lr, min_lr, weight_decay, warmup, label_smoothing and clip_norm; and their checks.
// Header-only: the Python bindings compile the apps' run configurations without the
// uwaga_apps_common library.
#include <nlohmann/json.hpp>

#include "core/error.h"

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

// Throws an Error naming the flag that sets the first setting that cannot work.
template <class RunConfig>
void check_training_settings(const RunConfig& run) {
  if (run.epochs < 1 || run.epochs > 1'000'000)
    fail("--epochs must be from 1 to 1,000,000, got ", run.epochs);
  if (run.batch_size < 1) fail("--batch-size must be at least 1, got ", run.batch_size);
  if (!(run.lr > 0)) fail("--lr must be positive, got ", run.lr);
  if (!(run.min_lr >= 0)) fail("--min-lr must be >= 0, got ", run.min_lr);
  if (!(run.weight_decay >= 0)) fail("--weight-decay must be >= 0, got ", run.weight_decay);
  if (run.warmup < 0) fail("--warmup must be >= 0, got ", run.warmup);
  if (!(run.label_smoothing >= 0 && run.label_smoothing < 1))
    fail("--label-smoothing must be in [0, 1), got ", run.label_smoothing);
  if (!(run.clip_norm >= 0)) fail("--clip must be >= 0 (0: off), got ", run.clip_norm);
}

}  // namespace uwaga::apps
