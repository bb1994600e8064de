#include "apps/pose/pose_checkpoint.h"

namespace uwaga::apps {

PoseRunConfig read_pose_run_config(const std::string& checkpoint) {
  return read_run_config<PoseRunConfig, nn::VitPose>(checkpoint, "uwaga-pose");
}

LoadedPose load_pose(const std::string& checkpoint) {
  return load_model<PoseRunConfig, nn::VitPose>(checkpoint, "uwaga-pose");
}

}  // namespace uwaga::apps
