#pragma once
// Rebuilding a trained keypoint model from a uwaga-pose checkpoint: the run configuration
// travels in the checkpoint's metadata, so the model can be built before its weights are loaded.
#include <string>

#include "apps/common/loaded_model.h"
#include "apps/pose/pose_run_config.h"

namespace uwaga::apps {

using LoadedPose = LoadedModel<PoseRunConfig, nn::VitPose>;

// Errors name the file: missing, not a checkpoint, not written by uwaga-pose.
PoseRunConfig read_pose_run_config(const std::string& checkpoint);
LoadedPose load_pose(const std::string& checkpoint);

}  // namespace uwaga::apps
