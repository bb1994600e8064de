#include "apps/vit/vit_checkpoint.h"

namespace uwaga::apps {

VitRunConfig read_vit_run_config(const std::string& checkpoint) {
  return read_run_config<VitRunConfig>(checkpoint, "uwaga-vit");
}

LoadedVit load_vit(const std::string& checkpoint) {
  return load_model<VitRunConfig, nn::VisionTransformer>(checkpoint, "uwaga-vit");
}

}  // namespace uwaga::apps
