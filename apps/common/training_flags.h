#pragma once
// What the train modes of the programs share on the command line: the run directory (--out,
// --resume), the optimisation flags that override a preset's fields, the check
// that a resumed run keeps its settings, the trainer's options (--max-steps, --log-every) and the
// replicas' micro-batches (--micro-batch).
#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

#include "apps/common/command_line.h"
#include "core/error.h"
#include "core/json_fields.h"
#include "nn/multi_head_attention.h"
#include "optim/data_parallel.h"
#include "optim/trainer.h"

namespace uwaga::apps {

// Where a training run writes its checkpoint and log.
struct TrainingOutput {
  std::string out;         // --out DIR
  std::string checkpoint;  // DIR/checkpoint.safetensors
  bool resume = false;     // --resume: continue from that checkpoint
};

// Fails when --out is missing or empty, or when a new run (no --resume) would overwrite the run
// already saved there.
TrainingOutput training_output(const cxxopts::ParseResult& r);

// The optimisation flags of every train command: --epochs, --batch-size (`examples` per step),
// --grad-accum, --lr, --min-lr, --weight-decay, --warmup, --label-smoothing (without
// `label_smoothing`: a loss with no classes to smooth), --clip, --precision, --seed (of `seeded`,
// e.g. "initialisation and shuffling"), --log-every and --eval-every.
void add_training_flags(cxxopts::Options& o, const std::string& examples,
                        const std::string& seeded, bool label_smoothing = true);

// --epochs, --batch-size, --grad-accum, --lr, --min-lr, --weight-decay, --warmup,
// --label-smoothing, --clip, --precision and --seed onto the fields of the same meaning that every
// program's run configuration has.
template <class RunConfig>
void override_training_flags(const cxxopts::ParseResult& r, RunConfig& run) {
  override_from(r, "epochs", run.epochs);
  override_from(r, "batch-size", run.batch_size);
  override_from(r, "grad-accum", run.grad_accum);
  override_from(r, "lr", run.lr);
  override_from(r, "min-lr", run.min_lr);
  override_from(r, "weight-decay", run.weight_decay);
  override_from(r, "warmup", run.warmup);
  override_from(r, "label-smoothing", run.label_smoothing);
  override_from(r, "clip", run.clip_norm);
  override_from(r, "precision", run.precision);
  override_from(r, "seed", run.seed);
}

// The run a train command trains: with --resume the checkpoint's (resumed_run_config below),
// else the --preset's (`preset` builds it) with the flags on top (`apply`, as for a resumed run).
template <class RunConfig, class Apply>
RunConfig new_or_resumed_run(const cxxopts::ParseResult& r, const TrainingOutput& output,
                             RunConfig (*read)(const std::string&),
                             RunConfig (*preset)(const std::string&), Apply apply);

// The run configuration saved in the checkpoint --resume continues, read by `read`. A resumed run
// keeps its settings, so that it ends where the uninterrupted run would have: the flags that
// configure it (`apply` sets them on a run configuration, as for a new run) may repeat the saved
// values, and any that differs is an error naming the setting and both values. --epochs is the
// exception: a finished run can be trained for longer.
template <class RunConfig, class Apply>
RunConfig resumed_run_config(const cxxopts::ParseResult& r, const std::string& checkpoint,
                             RunConfig (*read)(const std::string&), Apply apply) {
  if (!std::filesystem::exists(checkpoint)) fail("train: --resume: no checkpoint at ", checkpoint);
  RunConfig run = read(checkpoint);
  RunConfig asked = run;
  if (r.count("preset") && !r["preset"].has_default()) asked.preset = r["preset"].as<std::string>();
  apply(asked, r);
  if (asked.epochs < run.epochs)
    fail("train: --resume: the run in ", checkpoint, " was planned for ", run.epochs,
         " epochs; --epochs may grow it, not shrink it (got ", asked.epochs, ")");
  run.epochs = asked.epochs;
  const nlohmann::json saved = fields_to_json(run);
  const nlohmann::json wanted = fields_to_json(asked);
  const nlohmann::json patch = nlohmann::json::diff(saved, wanted);
  if (!patch.empty()) {
    const std::string path = patch[0].at("path");  // "/model/dim": the first setting that differs
    const nlohmann::json::json_pointer at(path);
    auto value = [&](const nlohmann::json& j) {
      return j.contains(at) ? json_brief(j.at(at)) : std::string("none");
    };
    std::string setting = path.substr(1);
    for (char& c : setting) c = c == '/' ? '.' : c;
    fail("train: --resume: the run in ", checkpoint, " has ", setting, " = ", value(saved),
         " and the flags ask for ", value(wanted),
         "; a resumed run keeps its settings (only --epochs may change): leave the flag out, "
         "or train a new run in another --out");
  }
  return run;
}

template <class RunConfig, class Apply>
RunConfig new_or_resumed_run(const cxxopts::ParseResult& r, const TrainingOutput& output,
                             RunConfig (*read)(const std::string&),
                             RunConfig (*preset)(const std::string&), Apply apply) {
  if (output.resume) return resumed_run_config(r, output.checkpoint, read, apply);
  RunConfig run = preset(r["preset"].as<std::string>());
  apply(run, r);
  return run;
}

// --max-steps, --log-every, --eval-every (checked), --threads and --micro-batch, and the output directory;
// `program` names the command that resumes the run, which the trainer prints when it is
// interrupted. The run's own settings (epochs, clipping, seed) are the training setup's to add.
optim::TrainerOptions trainer_options(const cxxopts::ParseResult& r, const TrainingOutput& output,
                                      const std::string& program);

// --attention fast|reference: how the models' attention layers compute (nn/multi_head_attention.h),
// for the run's model configuration (fails naming any other value).
nn::AttentionPath attention_path(const cxxopts::ParseResult& r);

// --micro-batch: the most `items` ("images", "sentence pairs") one replica takes per
// forward/backward pass (optim::DataParallel), `default_value` unless given.
void add_micro_batch_flag(cxxopts::Options& o, std::int64_t default_value, const char* items);

// --threads N: threads for uwaga and OpenBLAS; without it UWAGA_NUM_THREADS, else `fallback`
// ("all cores" or "1", as set_threads_from_option's all_cores_by_default says).
void add_threads_option(cxxopts::Options& o, const char* fallback);
// Sets the threads from --threads (at least 1; a warning on stderr, naming `program`, when above
// the cores), else from UWAGA_NUM_THREADS, else every core or one. Training uses every core by
// default; a program that reads one small input at a time may be faster on one.
void set_threads_from_option(const cxxopts::ParseResult& r, const char* program,
                             bool all_cores_by_default);

// One replica per uwaga thread with --micro-batch (fails when it is negative).
optim::DataParallelOptions replica_options(const cxxopts::ParseResult& r);

}  // namespace uwaga::apps
