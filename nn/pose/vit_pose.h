#pragma once
// ViTPose (Xu et al., 2022): top-down keypoint estimation with a plain Vision Transformer. One
// person's crop x (C, H, W) goes through the ViT of SEEDS §6 without a class token — the
// patches' tokens are what the model reads out — and a light decoder turns the tokens, laid out
// as the (H/P) × (W/P) grid they came from, into one heatmap per joint:
//
//   z_0 = [x_p^1 E; …; x_p^N E] + E_pos                   N = (H/P)·(W/P) patches, no x_class
//   z_L = Blocks(z_0)                                      L pre-LN encoder blocks (SEEDS §5)
//   F   = LN(z_L) as (D, H/P, W/P)                         the feature map (nn/vit_backbone.h)
//   M   = Decoder(F)                                       (K, 4H/P, 4W/P): nn/pose/pose_decoders.h
//
// Heatmap M_k peaks where joint k is: a training target is a Gaussian at the joint
// (nn/pose/keypoint_heatmaps.h), the loss their mean squared difference (nn/loss.h,
// KeypointMSELoss), and a prediction is read back at the arg-max. The heatmaps are at four times
// the token grid, a stride of P/4 input pixels: 4 in the paper (patch 16, 256 × 192 inputs, 64 × 48
// maps); in uwaga-pose's stick-figure presets (64 × 48 inputs) 2 with patch 8 (32 × 24 maps) and 1
// with patch 4 (64 × 48 maps).
//
// Attention does the pose reasoning: every patch's token can look at every other, so a wrist's
// token may attend to the elbow and shoulder it hangs from (uwaga-pose attention draws it).
//
// Parameter names as mmpose's ViTPose: backbone.{patch_embed, pos_embed, blocks.<i>.…, norm}
// (nn/vit_backbone.h; mmpose calls the final norm last_norm) and keypoint_head.… (the decoder's
// names, nn/pose/pose_decoders.h). Init: the backbone's, then the decoder's.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/model.h"
#include "nn/pose/pose_decoders.h"
#include "nn/vit_backbone.h"

namespace uwaga::nn {

struct PoseConfig {
  std::int64_t image_height = 64;  // H
  std::int64_t image_width = 48;   // W
  std::int64_t channels = 1;       // C
  std::int64_t patch = 8;          // P
  std::int64_t dim = 96;           // D
  std::int64_t depth = 4;          // L
  std::int64_t heads = 4;          // h
  std::int64_t mlp_dim = 192;
  std::int64_t joints = 15;        // K
  std::string decoder = "classic";        // "classic" or "simple" (nn/pose/pose_decoders.h)
  std::int64_t decoder_channels = 64;     // the classic decoder's width c (the paper: 256)
  // How the attention layers compute (nn/multi_head_attention.h): the fused kernel, or the
  // readable reference path. The same numbers up to rounding; a way of computing, not part of the
  // model, so it is not in the JSON (a run chooses it with --attention).
  AttentionPath attention = AttentionPath::fast;

  std::int64_t grid_height() const { return image_height / patch; }  // H/P
  std::int64_t grid_width() const { return image_width / patch; }    // W/P
  std::int64_t heatmap_height() const { return 4 * grid_height(); }  // 4H/P
  std::int64_t heatmap_width() const { return 4 * grid_width(); }    // 4W/P
  float heatmap_stride() const { return static_cast<float>(patch) / 4.0f; }  // P/4 input pixels
  VitBackboneOptions backbone() const;     // no class token
  HeatmapDecoderOptions head() const;
  // Multiply-adds ×2 of one forward pass on one image (matrix products and convolutions).
  std::int64_t forward_flops() const;
  // Throws an Error naming the offending field when the configuration cannot work.
  void validate() const;
  std::string to_json() const;
  static PoseConfig from_json(const std::string& json);

  // The JSON fields, one list for to_json and from_json (core/json_fields.h).
  template <class Field>
  static void fields(Field&& field) {
    field("image_height", &PoseConfig::image_height);
    field("image_width", &PoseConfig::image_width);
    field("channels", &PoseConfig::channels);
    field("patch", &PoseConfig::patch);
    field("dim", &PoseConfig::dim);
    field("depth", &PoseConfig::depth);
    field("heads", &PoseConfig::heads);
    field("mlp_dim", &PoseConfig::mlp_dim);
    field("joints", &PoseConfig::joints);
    field("decoder", &PoseConfig::decoder);
    field("decoder_channels", &PoseConfig::decoder_channels);
  }
};

class VitPose : public Model {
 public:
  VitPose(const PoseConfig& config, Generator& gen);

  Tensor forward(const Tensor& images);  // (B, C, H, W) -> heatmaps (B, K, 4H/P, 4W/P)
  Tensor forward_batch(const std::vector<Tensor>& inputs) override;  // {images}
  std::shared_ptr<Model> replica() const override;

  // Keeps each block's attention weights (B, h, N, N) from the next forward on: token n is patch
  // (n / (W/P), n % (W/P)).
  void keep_attention(bool on) { backbone->keep_attention(on); }
  std::vector<Tensor> attention_maps() const { return backbone->attention_maps(); }

  const PoseConfig config;
  std::shared_ptr<VitBackbone> backbone;
  std::shared_ptr<HeatmapDecoder> keypoint_head;
};

}  // namespace uwaga::nn
