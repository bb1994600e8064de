#include "nn/pose/vit_pose.h"

#include "core/json_fields.h"

namespace uwaga::nn {

VitBackboneOptions PoseConfig::backbone() const {
  return {.image_height = image_height, .image_width = image_width, .channels = channels,
          .patch = patch, .dim = dim, .depth = depth, .heads = heads, .mlp_dim = mlp_dim,
          .class_token = false, .attention = attention};
}

HeatmapDecoderOptions PoseConfig::head() const {
  return {.kind = decoder, .in_channels = dim, .channels = decoder_channels, .joints = joints};
}

std::int64_t PoseConfig::forward_flops() const {
  const std::int64_t h = grid_height(), w = grid_width(), D = dim, c = decoder_channels,
                     K = joints;
  std::int64_t decoder_flops = 0;
  if (decoder == "simple") {
    decoder_flops = 2 * (16 * h * w) * K * D * 9;  // the 3×3 convolution on the 4h × 4w maps
  } else {
    // Each input pixel of a transposed convolution adds a 4×4 kernel: 16 taps per channel pair.
    decoder_flops = 2 * (h * w) * D * c * 16         // deconv 1: h × w -> 2h × 2w
                    + 2 * (4 * h * w) * c * c * 16   // deconv 2: 2h × 2w -> 4h × 4w
                    + 2 * (16 * h * w) * c * K;      // the 1×1 convolution
  }
  return backbone().forward_flops() + decoder_flops;
}

void PoseConfig::validate() const {
  // At least 1, and at most a generous bound, far above any model this code can train. Within
  // the bounds forward_flops() fits in int64.
  auto in_range = [](const char* name, std::int64_t v, std::int64_t limit) {
    check_size_in_range("pose config", name, v, limit);
  };
  in_range("image height", image_height, 4096);
  in_range("image width", image_width, 4096);
  in_range("channels", channels, 1024);
  in_range("patch", patch, 4096);
  in_range("dim", dim, 65536);
  in_range("depth", depth, 1000);
  in_range("heads", heads, 65536);
  in_range("mlp-dim", mlp_dim, 65536);
  in_range("joints", joints, 10000);
  in_range("decoder channels", decoder_channels, 65536);
  backbone().validate("pose config");  // P divides H and W, h divides D
  if (grid_height() * grid_width() > 100000)
    fail("pose config: image ", image_height, "x", image_width, " with patch ", patch, " makes ",
         grid_height() * grid_width(), " patches, above the limit of 100000");
  check_heatmap_decoder_kind(decoder, "pose config");
}

std::string PoseConfig::to_json() const { return fields_to_json(*this).dump(); }

PoseConfig PoseConfig::from_json(const std::string& text) {
  PoseConfig c;
  fields_from_json(parse_json_input(text, "pose config"), c, "pose config");
  c.validate();
  return c;
}

VitPose::VitPose(const PoseConfig& c, Generator& gen) : config(c) {
  config.validate();
  backbone = register_module("backbone", std::make_shared<VitBackbone>(c.backbone(), gen));
  keypoint_head = register_module("keypoint_head", make_heatmap_decoder(c.head(), gen));
}

Tensor VitPose::forward_batch(const std::vector<Tensor>& inputs) {
  expect_inputs(inputs, 1, "ViTPose", "images (B, C, H, W)");
  return forward(inputs[0]);
}

std::shared_ptr<Model> VitPose::replica() const {
  return in_my_dtype(built_to_load<VitPose>(config));  // its values are the model's
}

Tensor VitPose::forward(const Tensor& images) {
  backbone->check_images(images, "ViTPose");
  Tensor features = backbone->feature_map(images);  // F  (B, D, H/P, W/P)
  return keypoint_head->forward(features);          // M  (B, K, 4H/P, 4W/P)
}

}  // namespace uwaga::nn
