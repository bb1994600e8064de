#pragma once
// Rebuilding a trained GPT from a uwaga-gpt checkpoint: the run configuration (with the character
// vocabulary) travels in the checkpoint's metadata, so the model can be built before its weights
// are loaded.
#include <string>

#include "apps/common/loaded_model.h"
#include "apps/gpt/gpt_run_config.h"

namespace uwaga::apps {

using LoadedGpt = LoadedModel<GptRunConfig, nn::Gpt>;

// Errors name the file: missing, not a checkpoint, not written by uwaga-gpt.
GptRunConfig read_gpt_run_config(const std::string& checkpoint);
LoadedGpt load_gpt(const std::string& checkpoint);
// The parameters' shapes, by name, a config implies (checked against a checkpoint's header
// before a model is built from it).
optim::ParameterShapes gpt_parameter_shapes(const nn::GptConfig& config);

}  // namespace uwaga::apps
