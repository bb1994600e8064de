#include "apps/pose/pose_checkpoint.h"

#include "apps/common/block_shapes.h"

namespace uwaga::apps {

PoseRunConfig read_pose_run_config(const std::string& checkpoint) {
  return read_run_config<PoseRunConfig>(checkpoint, "uwaga-pose", pose_parameter_shapes);
}

LoadedPose load_pose(const std::string& checkpoint) {
  return load_model<PoseRunConfig, nn::ViTPose>(checkpoint, "uwaga-pose", pose_parameter_shapes);
}

namespace {

// A BatchNorm2d of `channels`: γ and β, and its buffers (nn/batch_norm2d.h).
void add_batch_norm2d(optim::ParameterShapes& s, const std::string& name, std::int64_t channels) {
  s[name + ".weight"] = {channels};
  s[name + ".bias"] = {channels};
  s[name + ".running_mean"] = {channels};
  s[name + ".running_var"] = {channels};
  s[name + ".num_batches_tracked"] = {};
}

}  // namespace

// As ViTPose's constructor registers them (tests/apps check the two agree).
optim::ParameterShapes pose_parameter_shapes(const nn::PoseConfig& c) {
  c.validate();
  const std::int64_t D = c.dim, K = c.joints, ch = c.decoder_channels;
  optim::ParameterShapes shapes;
  add_linear(shapes, "backbone.patch_embed", c.patch * c.patch * c.channels, D);
  shapes["backbone.pos_embed"] = {1, c.grid_height() * c.grid_width(), D};
  for (std::int64_t i = 0; i < c.depth; ++i)
    add_encoder_block(shapes, "backbone.blocks." + std::to_string(i), D, c.mlp_dim);
  add_layer_norm(shapes, "backbone.norm", D);
  if (c.decoder == "simple") {
    shapes["keypoint_head.final_layer.weight"] = {K, D, 3, 3};
  } else {
    shapes["keypoint_head.deconv_layers.0.weight"] = {D, ch, 4, 4};
    add_batch_norm2d(shapes, "keypoint_head.deconv_layers.1", ch);
    shapes["keypoint_head.deconv_layers.3.weight"] = {ch, ch, 4, 4};
    add_batch_norm2d(shapes, "keypoint_head.deconv_layers.4", ch);
    shapes["keypoint_head.final_layer.weight"] = {K, ch, 1, 1};
  }
  shapes["keypoint_head.final_layer.bias"] = {K};
  return shapes;
}

}  // namespace uwaga::apps
