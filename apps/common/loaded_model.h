#pragma once
// A trained model rebuilt from the checkpoint of its run, as uwaga-vit and uwaga-translate write
// them: the run configuration travels in the checkpoint's metadata as JSON, so the model can be
// built before its weights are loaded. Header-only: the Python bindings compile the apps'
// checkpoint readers without the uwaga_apps_common library.
#include <filesystem>
#include <memory>
#include <string>

#include "core/error.h"
#include "core/random.h"
#include "optim/checkpoint.h"

namespace uwaga::apps {

template <class RunConfig, class Model>
struct LoadedModel {
  RunConfig run;
  std::unique_ptr<Model> model;  // in eval mode
};

// RunConfig::from_json of the checkpoint's metadata. Errors name the file: missing, not a
// checkpoint, or not written by `program` (whose from_json rejects the configuration).
template <class RunConfig>
RunConfig read_run_config(const std::string& checkpoint, const char* program) {
  if (!std::filesystem::exists(checkpoint)) fail("checkpoint '", checkpoint, "' does not exist");
  optim::CheckpointInfo info = optim::read_checkpoint_info(checkpoint);
  try {
    return RunConfig::from_json(info.config);
  } catch (const Error& e) {
    fail("checkpoint '", checkpoint, "' was not written by ", program, " (", e.what(), ")");
  }
}

// The model is initialised from the run's seed, then overwritten by the checkpoint's weights.
template <class RunConfig, class Model>
LoadedModel<RunConfig, Model> load_model(const std::string& checkpoint, const char* program) {
  LoadedModel<RunConfig, Model> out;
  out.run = read_run_config<RunConfig>(checkpoint, program);
  Generator gen(out.run.seed);
  out.model = std::make_unique<Model>(out.run.model, gen);
  optim::load_checkpoint(checkpoint, *out.model, nullptr);
  out.model->eval();
  return out;
}

}  // namespace uwaga::apps
