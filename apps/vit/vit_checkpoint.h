#pragma once
// Rebuilding a trained ViT from a uwaga-vit checkpoint: the run configuration travels in the
// checkpoint's metadata, so the model can be built before its weights are loaded.
#include <string>

#include "apps/common/loaded_model.h"
#include "apps/vit/vit_run_config.h"

namespace uwaga::apps {

using LoadedVit = LoadedModel<VitRunConfig, nn::VisionTransformer>;

// Errors name the file: missing, not a checkpoint, not written by uwaga-vit, or not matching.
VitRunConfig read_vit_run_config(const std::string& checkpoint);
// A run trained with --ema (run.ema > 0) is loaded with the moving average of its weights (the
// optimizer state's "<name>.ema", optim/ema.h): the model its epochs' test accuracy measured.
// An average holding NaN or inf is refused, naming the parameter, as --resume refuses it.
LoadedVit load_vit(const std::string& checkpoint);

}  // namespace uwaga::apps
