#pragma once
// How every program's training setup (VitTraining, TranslateTraining, GptTraining, PoseTraining)
// starts from its run configuration: the model's first initialisation from the run's seed, and
// the Trainer's options completed with what the run decides. Header-only, as
// training_settings_json.h: the Python bindings compile the training setups without the
// uwaga_apps_common library.
#include <memory>
#include <utility>

#include "core/random.h"
#include "optim/trainer.h"

namespace uwaga::apps {

// The model's first (float32) initialisation: built from run.model with a generator seeded by
// run.seed, so a run and its repeat start from the same weights (a resume then loads its own).
template <class Model, class RunConfig>
std::shared_ptr<Model> initial_model(const RunConfig& run) {
  Generator gen(run.seed);
  return std::make_shared<Model>(run.model, gen);
}

// `options` (files, budget, threads, log) with the run's epochs, clipping and seed, its
// configuration (saved in every checkpoint, checked on --resume) and the name of the split its
// evaluation scores ("test", "valid": the log's "<split>_<metric>" keys).
template <class RunConfig>
optim::TrainerOptions with_run(optim::TrainerOptions options, const RunConfig& run,
                               const char* eval_split) {
  options.epochs = run.epochs;
  options.clip_norm = run.clip_norm;
  options.seed = run.seed;
  options.config = run.to_json();
  options.eval_split = eval_split;
  return options;
}

}  // namespace uwaga::apps
