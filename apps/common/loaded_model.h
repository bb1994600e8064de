#pragma once
// A trained model rebuilt from the checkpoint of its run, as uwaga-vit and uwaga-translate write
// them: the run configuration travels in the checkpoint's metadata as JSON, so the model can be
// built before its weights are loaded. Header-only: the Python bindings compile the apps'
// checkpoint readers without the uwaga_apps_common library (and memory_budget.cpp).
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/common/memory_budget.h"
#include "core/error.h"
#include "core/random.h"
#include "nn/module.h"
#include "optim/checkpoint.h"

namespace uwaga::apps {

template <class RunConfig, class Model>
struct LoadedModel {
  RunConfig run;
  std::unique_ptr<Model> model;  // in eval mode
};

// Which program wrote a run configuration, told by fields only it writes: the program its
// "format" names ("uwaga-translate-1": "uwaga-translate", "uwaga-gpt-1": "uwaga-gpt"),
// "uwaga-vit" (a "dataset" and no "format"), or "" when neither.
inline std::string run_config_program(const std::string& config) {
  const nlohmann::json j = nlohmann::json::parse(config, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return "";
  if (j.contains("format") && j["format"].is_string()) {
    const std::string format = j["format"].get<std::string>();  // "uwaga-<program>-<version>"
    const std::size_t dash = format.rfind('-');
    if (format.rfind("uwaga-", 0) == 0 && dash > 6 && dash + 1 < format.size() &&
        format.find_first_not_of("0123456789", dash + 1) == std::string::npos)
      return format.substr(0, dash);
    return "";
  }
  if (j.contains("dataset") && j.contains("model")) return "uwaga-vit";
  return "";
}

// The parameter and buffer shapes, by name, of the Model that `config` describes, from the
// model's own declaration: its constructor runs in declare-only mode (nn/module.h), so nothing is
// allocated whatever sizes the configuration claims.
template <class Model, class Config>
optim::ParameterShapes declared_model_shapes(const Config& config) {
  Generator unused(0);  // no initialiser runs
  return nn::declared_shapes<Model>(config, unused);
}

// The number of parameters (buffers aside) of the Model that `config` describes, from the same
// declaration: what the memory estimate of a training run counts (check_training_fits), known
// before anything is allocated.
template <class Model, class Config>
double declared_parameter_count(const Config& config) {
  nn::DeclareOnly declare_only;
  Generator unused(0);  // no initialiser runs
  const Model model(config, unused);
  return static_cast<double>(model.num_parameters());
}

// RunConfig::from_json of the checkpoint's metadata. Errors name the file: missing, not a
// checkpoint, written by the other program, not written by `program` (whose from_json rejects
// the configuration), or holding tensors other than those of the Model the configuration
// describes (declared_model_shapes). That last check reads only the header, and comes before
// anything is allocated for the model: a config that does not describe the file's tensors (dim
// 65536, depth 1000 in a file of 1 kB) would otherwise allocate whatever it claims.
template <class RunConfig, class Model>
RunConfig read_run_config(const std::string& checkpoint, const char* program) {
  if (!std::filesystem::exists(checkpoint)) fail("checkpoint '", checkpoint, "' does not exist");
  optim::CheckpointInfo info = optim::read_checkpoint_info(checkpoint);
  if (const std::string writer = run_config_program(info.config);
      !writer.empty() && writer != program)
    fail("checkpoint '", checkpoint, "' is a ", writer, " checkpoint, not a ", program,
         " one; give it to ", writer);
  RunConfig run;
  try {
    run = RunConfig::from_json(info.config);
  } catch (const Error& e) {
    fail("checkpoint '", checkpoint, "' was not written by ", program, " (", e.what(), ")");
  }
  optim::check_checkpoint_shapes(checkpoint, declared_model_shapes<Model>(run.model));
  return run;
}

// The model is initialised from the run's seed, then overwritten by the checkpoint's weights.
// Refused before either when it and the checkpoint's tensors would not fit in memory.
template <class RunConfig, class Model>
LoadedModel<RunConfig, Model> load_model(const std::string& checkpoint, const char* program) {
  LoadedModel<RunConfig, Model> out;
  out.run = read_run_config<RunConfig, Model>(checkpoint, program);
  double values = 0;
  for (const auto& [name, shape] : declared_model_shapes<Model>(out.run.model))
    values += static_cast<double>(numel(shape));
  check_loading_fits(checkpoint, values);
  out.model = nn::built_to_load<Model>(out.run.model);
  optim::load_checkpoint(checkpoint, *out.model, nullptr);
  out.model->eval();
  return out;
}

}  // namespace uwaga::apps
