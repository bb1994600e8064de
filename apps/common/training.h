#pragma once
// What every program's training setup (VitTraining, TranslateTraining, GptTraining, PoseTraining)
// has in common: the model's first initialisation from the run's seed, the training batches, the
// loss, AdamW with weight decay on the weights only (not biases, norms, embeddings), optionally a
// moving average of the weights, warm-up + cosine over the run's epochs, and the Trainer that fits
// them with the program's evaluation after every epoch. A program supplies its batches, its loss,
// its AdamW options, the split it evaluates and the evaluation. Header-only, as
// training_settings_json.h: the Python bindings compile the training setups without the
// uwaga_apps_common library.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "core/random.h"
#include "nn/module.h"
#include "optim/adam.h"
#include "optim/ema.h"
#include "optim/lr_schedule.h"
#include "optim/trainer.h"

namespace uwaga::apps {

// Whether a new run's first weights come from a file (uwaga-gpt's --init) instead of its seed.
template <class RunConfig>
bool starts_from_file(const RunConfig& run) {
  if constexpr (requires { run.init.empty(); }) return !run.init.empty();
  else return false;
}

// The model's first (float32) initialisation: built from run.model with a generator seeded by
// run.seed, so a run and its repeat start from the same weights. A model whose weights a file
// will overwrite (`weights_to_load`: a resume, --init) is built without drawing them.
template <class Model, class RunConfig>
std::shared_ptr<Model> initial_model(const RunConfig& run, bool weights_to_load) {
  if (weights_to_load) return nn::built_to_load<Model>(run.model);
  Generator gen(run.seed);
  return std::make_shared<Model>(run.model, gen);
}

// `options` (files, budget, threads, log) with the run's epochs, clipping and seed, its
// configuration (saved in every checkpoint, checked on --resume; the log's shorter one where the
// run has to_log_json) and the name of the split its
// evaluation scores ("test", "valid": the log's "<split>_<metric>" keys).
template <class RunConfig>
optim::TrainerOptions with_run(optim::TrainerOptions options, const RunConfig& run,
                               const char* eval_split) {
  options.epochs = run.epochs;
  options.clip_norm = run.clip_norm;
  options.seed = run.seed;
  options.config = run.to_json();
  if constexpr (requires { run.to_log_json(); }) options.log_config = run.to_log_json();
  options.eval_split = eval_split;
  return options;
}

// One training run of a Model on Batches with a Loss, as the run configuration says (its model,
// seed, lr, min_lr, warmup, weight_decay, epochs, clip_norm).
template <class RunConfig, class Model, class Batches, class Loss>
class Training {
 public:
  virtual ~Training() = default;
  Training(const Training&) = delete;
  Training& operator=(const Training&) = delete;

  optim::TrainSummary fit() { return trainer_.fit([this] { return evaluate(); }); }

  Model& model() { return *model_; }
  std::shared_ptr<Model> shared_model() const { return model_; }
  const RunConfig& run() const { return run_; }
  std::int64_t batches_per_epoch() const { return batches_.batches_per_epoch(); }
  std::int64_t warmup() const { return schedule_.warmup(); }  // cut to a short run's length

 protected:
  // make_batches() builds the training batches, once the model is built. `options`: the run's
  // files, budget, threads and log. With ema > 0 the optimizer keeps a moving average of the
  // weights with that decay (optim/ema.h) after each AdamW step.
  template <class MakeBatches>
  Training(const RunConfig& run, MakeBatches make_batches, Loss loss, optim::AdamOptions adam,
           const char* eval_split, optim::TrainerOptions options, double ema = 0)
      : run_(run),
        model_(initial_model<Model>(run, options.resume || starts_from_file(run))),
        batches_(make_batches()),
        loss_(std::move(loss)),
        optimizer_(optim::make_param_groups(*model_, run.weight_decay), adam),
        ema_(ema > 0 ? std::make_unique<optim::WithEma>(optimizer_, ema) : nullptr),
        schedule_(run.lr, std::min(run.warmup, run.epochs * batches_.batches_per_epoch() - 1),
                  run.epochs * batches_.batches_per_epoch(), run.min_lr),
        trainer_(*model_, batches_, loss_, ema_ ? static_cast<optim::Optimizer&>(*ema_) : optimizer_,
                 schedule_, with_run(std::move(options), run, eval_split)) {}

  // The metrics of the model after an epoch, by name (the log's "<split>_<name>").
  virtual std::map<std::string, double> evaluate() = 0;

  RunConfig run_;
  std::shared_ptr<Model> model_;
  Batches batches_;
  Loss loss_;
  optim::AdamW optimizer_;
  std::unique_ptr<optim::WithEma> ema_;  // with ema > 0: AdamW, then the average
  optim::WarmupCosineLr schedule_;
  optim::Trainer trainer_;
};

}  // namespace uwaga::apps
