#include "apps/vit/vit_checkpoint.h"

#include <filesystem>

#include "optim/checkpoint.h"

namespace uwaga::apps {

VitRunConfig read_vit_run_config(const std::string& checkpoint) {
  if (!std::filesystem::exists(checkpoint)) fail("checkpoint '", checkpoint, "' does not exist");
  optim::CheckpointInfo info = optim::read_checkpoint_info(checkpoint);
  try {
    return VitRunConfig::from_json(info.config);
  } catch (const Error& e) {
    fail("checkpoint '", checkpoint, "' was not written by uwaga-vit (", e.what(), ")");
  }
}

LoadedVit load_vit(const std::string& checkpoint) {
  LoadedVit out;
  out.run = read_vit_run_config(checkpoint);
  Generator gen(out.run.seed);
  out.model = std::make_unique<nn::VisionTransformer>(out.run.model, gen);
  optim::load_checkpoint(checkpoint, *out.model, nullptr);
  out.model->eval();
  return out;
}

}  // namespace uwaga::apps
