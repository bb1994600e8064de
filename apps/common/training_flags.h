#pragma once
// What the train modes of uwaga-vit and uwaga-translate share on the command line: the run
// directory (--out, --resume), the optimisation flags that override a preset's fields, the flags
// a resumed run may not change, the trainer's options (--max-steps, --log-every) and the
// replicas' micro-batches (--micro-batch).
#include <cxxopts.hpp>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>

#include "apps/common/command_line.h"
#include "core/error.h"
#include "optim/data_parallel.h"
#include "optim/trainer.h"

namespace uwaga::apps {

// Where a training run writes its checkpoint and log.
struct TrainingOutput {
  std::string out;         // --out DIR
  std::string checkpoint;  // DIR/checkpoint.safetensors
  bool resume = false;     // --resume: continue from that checkpoint
};

// Fails when --out is missing.
TrainingOutput training_output(const cxxopts::ParseResult& r);

// --epochs, --batch-size, --lr, --weight-decay, --warmup, --label-smoothing, --clip and --seed
// onto the fields of the same meaning that both programs' run configurations have.
template <class RunConfig>
void override_training_flags(const cxxopts::ParseResult& r, RunConfig& run) {
  override_from(r, "epochs", run.epochs);
  override_from(r, "batch-size", run.batch_size);
  override_from(r, "lr", run.lr);
  override_from(r, "weight-decay", run.weight_decay);
  override_from(r, "warmup", run.warmup);
  override_from(r, "label-smoothing", run.label_smoothing);
  override_from(r, "clip", run.clip_norm);
  override_from(r, "seed", run.seed);
}

// The run configuration saved in the checkpoint --resume continues, read by `read`. The flags in
// `fixed` (the model, the data, the seed) cannot change then: the user giving one is an error.
// --epochs can, so that a finished run can be trained for longer.
template <class RunConfig>
RunConfig resumed_run_config(const cxxopts::ParseResult& r, const std::string& checkpoint,
                             RunConfig (*read)(const std::string&),
                             std::initializer_list<const char*> fixed) {
  if (!std::filesystem::exists(checkpoint)) fail("train: --resume: no checkpoint at ", checkpoint);
  RunConfig run = read(checkpoint);
  for (const char* flag : fixed)
    if (r.count(flag) && !r[flag].has_default())
      fail("train: --", flag, " cannot change when resuming (the checkpoint fixes it)");
  override_from(r, "epochs", run.epochs);
  return run;
}

// --max-steps and --log-every with the run's epochs and clipping; `program` names the command
// that resumes the run, which the trainer prints when it is interrupted.
optim::TrainerOptions trainer_options(const cxxopts::ParseResult& r, const TrainingOutput& output,
                                      std::int64_t epochs, double clip_norm,
                                      const std::string& program);

// --micro-batch: the most `items` ("images", "sentence pairs") one replica takes per
// forward/backward pass (optim::DataParallel), `default_value` unless given.
void add_micro_batch_flag(cxxopts::Options& o, std::int64_t default_value, const char* items);

// One replica per uwaga thread with --micro-batch (fails when it is negative); prints a line
// saying so under the run's summary.
optim::DataParallelOptions replica_options(const cxxopts::ParseResult& r, const char* items);

}  // namespace uwaga::apps
