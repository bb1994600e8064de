#pragma once
// The optimisation settings both programs' run configurations (VitRunConfig, TranslateRunConfig)
// have under the same names, as fields of the JSON that travels in a checkpoint: epochs,
// batch_size, grad_accum, lr, min_lr, weight_decay, warmup, label_smoothing, clip_norm and
// precision; and their checks.
// Header-only: the Python bindings compile the apps' run configurations without the
// uwaga_apps_common library.
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace uwaga::apps {

// Their fields in the run configuration's field list (core/json_fields.h): RunConfig::fields
// calls training_settings_fields<RunConfig>(field) among its own.
template <class RunConfig, class Field>
void training_settings_fields(Field& field) {
  field("epochs", &RunConfig::epochs);
  field("batch_size", &RunConfig::batch_size);
  field("grad_accum", &RunConfig::grad_accum);
  field("lr", &RunConfig::lr);
  field("min_lr", &RunConfig::min_lr);
  field("weight_decay", &RunConfig::weight_decay);
  field("warmup", &RunConfig::warmup);
  field("label_smoothing", &RunConfig::label_smoothing);
  field("clip_norm", &RunConfig::clip_norm);
  field("precision", &RunConfig::precision);
}

// The examples of one optimizer step: --grad-accum batches of --batch-size, each its own
// forward/backward pass (per replica: train_command sets the passes), their gradients summed
// before the step — the step of a batch grad_accum times as large, in the memory of one.
template <class RunConfig>
std::int64_t step_batch(const RunConfig& run) {
  return run.batch_size * run.grad_accum;
}

// The step's batch for messages: "64", or "256 (--batch-size 64 × --grad-accum 4)".
template <class RunConfig>
std::string step_batch_text(const RunConfig& run) {
  std::string text = std::to_string(step_batch(run));
  if (run.grad_accum > 1)
    text += " (--batch-size " + std::to_string(run.batch_size) + " × --grad-accum " +
            std::to_string(run.grad_accum) + ")";
  return text;
}

// A run configuration saved before a training setting existed, completed with the value such runs
// trained with (grad_accum 1, precision fp32); each RunConfig::from_json calls it before reading
// the fields.
inline void complete_older_training_settings(nlohmann::json& j) {
  if (j.is_object() && !j.contains("grad_accum")) j["grad_accum"] = 1;
  if (j.is_object() && !j.contains("precision")) j["precision"] = "fp32";
}

// Throws an Error naming the flag that sets the first setting that cannot work.
template <class RunConfig>
void check_training_settings(const RunConfig& run) {
  if (run.epochs < 1 || run.epochs > 1'000'000)
    fail("--epochs must be from 1 to 1,000,000, got ", run.epochs);
  if (run.batch_size < 1) fail("--batch-size must be at least 1, got ", run.batch_size);
  if (run.grad_accum < 1 || run.grad_accum > 65'536)
    fail("--grad-accum must be from 1 to 65,536, got ", run.grad_accum);
  if (run.batch_size > std::numeric_limits<std::int64_t>::max() / 65'536)
    fail("--batch-size ", run.batch_size, " is too large");
  if (!(run.lr > 0)) fail("--lr must be positive, got ", run.lr);
  if (!(run.min_lr >= 0)) fail("--min-lr must be >= 0, got ", run.min_lr);
  // The schedule decays from --lr to --min-lr: said here, it names both flags.
  if (run.min_lr > run.lr)
    fail("--min-lr ", run.min_lr, " is above --lr ", run.lr, ": the learning rate decays from "
         "--lr down to --min-lr, so --min-lr must be at most --lr");
  if (!(run.weight_decay >= 0)) fail("--weight-decay must be >= 0, got ", run.weight_decay);
  if (run.warmup < 0) fail("--warmup must be >= 0, got ", run.warmup);
  if (!(run.label_smoothing >= 0 && run.label_smoothing < 1))
    fail("--label-smoothing must be in [0, 1), got ", run.label_smoothing);
  if (!(run.clip_norm >= 0)) fail("--clip must be >= 0 (0: off), got ", run.clip_norm);
  if (run.precision != "fp32" && run.precision != "bf16")
    fail("--precision must be fp32 or bf16, got '", run.precision, "'");
}

}  // namespace uwaga::apps
