#pragma once
// ViTPose's two heatmap decoders (Xu et al., "ViTPose", 2022, §3.1): from the backbone's feature
// map F (B, D, h, w) — one D-vector per patch, laid out as the patches lie in the image — to one
// heatmap per joint, at four times the token grid, (B, K, 4h, 4w):
//
//   classic  K = Conv1×1(ReLU(BN(Deconv(ReLU(BN(Deconv(F)))))))
//            each Deconv a transposed convolution, 4×4, stride 2, padding 1, no bias, that doubles
//            h and w (nn/conv/conv_transpose2d.h), BN a BatchNorm2d (nn/conv/batch_norm2d.h), then a 1×1
//            convolution from the decoder's channels to K maps — SimpleBaseline's head (Xiao et
//            al. 2018), ViTPose's default;
//   simple   K = Conv3×3(Bilinear×4(ReLU(F)))
//            bilinear upsampling ×4 (align_corners = False, nn/conv/upsample.h), then a 3×3 convolution
//            (padding 1) straight from D channels to K maps — ViTPose's point that a plain ViT's
//            features need almost no decoder.
//
// The heatmaps' stride is P/4 input pixels (P the patch size): 4 for the paper's patch 16 on
// 256 × 192 inputs (64 × 48 maps), 2 for patch 8 on 64 × 48 (32 × 24 maps).
//
// Where the simple decoder can put a peak: its heatmaps are linear in the bilinearly upsampled
// features, and between four token centres a bilinear function f = a + bx + cy + dxy is linear
// along every row and column, so its maximum lies on the lines through the token centres; the
// 3×3 convolution adds copies shifted by one cell. So each map peaks within one cell (per axis)
// of a line of token centres. Neighbouring centres are always 4 cells apart, so a joint midway
// between two is missed by at least a cell, P/4 input pixels: 2 with 8 × 8 patches, 1 with 4 × 4.
// The classic decoder's learned transposed convolutions have no such limit. (uwaga-pose's
// stick-simple preset uses 4 × 4 patches for this reason.)
//
// Parameter names as mmpose's TopdownHeatmapSimpleHead, whose layers ViTPose uses:
//   classic  deconv_layers.0 (weight (D, c, 4, 4)), deconv_layers.1 (BN: weight, bias and the
//            buffers running_mean, running_var, num_batches_tracked), deconv_layers.3
//            (c, c, 4, 4), deconv_layers.4 (BN), final_layer (weight (K, c, 1, 1), bias (K))
//            — indices 2 and 5 are the ReLUs, which have no parameters;
//   simple   final_layer (weight (K, D, 3, 3), bias (K)).
// Init as mmpose: transposed and final convolution weights N(0, 0.001), the final bias 0;
// BatchNorm γ = 1, β = 0. Small outputs at the start, as the targets are mostly 0.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/random.h"
#include "nn/conv/batch_norm2d.h"
#include "nn/conv/conv2d.h"
#include "nn/conv/conv_transpose2d.h"
#include "nn/module.h"

namespace uwaga::nn {

struct HeatmapDecoderOptions {
  std::string kind = "classic";  // "classic" or "simple"
  std::int64_t in_channels = 0;  // D, the backbone's width
  std::int64_t channels = 256;   // c, the deconvolutions' width (classic only)
  std::int64_t joints = 17;      // K

  static std::vector<std::string> kinds();  // {"classic", "simple"}
  // Throws an Error naming the offending field (an unknown kind lists the known ones).
  void validate() const;
};

// Throws an Error, starting with `what`, unless `kind` is one of HeatmapDecoderOptions::kinds().
void check_heatmap_decoder_kind(const std::string& kind, const char* what);

class HeatmapDecoder : public Module {
 public:
  virtual Tensor forward(const Tensor& features) = 0;  // (B, D, h, w) -> (B, K, 4h, 4w)
};

class ClassicDecoder : public HeatmapDecoder {
 public:
  ClassicDecoder(const HeatmapDecoderOptions& options, Generator& gen);
  Tensor forward(const Tensor& features) override;

  const HeatmapDecoderOptions options;
  std::shared_ptr<ConvTranspose2d> deconv1, deconv2;  // deconv_layers.0, deconv_layers.3
  std::shared_ptr<BatchNorm2d> bn1, bn2;              // deconv_layers.1, deconv_layers.4
  std::shared_ptr<Conv2d> final_layer;                // 1×1, c -> K
};

class SimpleDecoder : public HeatmapDecoder {
 public:
  SimpleDecoder(const HeatmapDecoderOptions& options, Generator& gen);
  Tensor forward(const Tensor& features) override;

  const HeatmapDecoderOptions options;
  std::shared_ptr<Conv2d> final_layer;  // 3×3, padding 1, D -> K
};

// The decoder options.kind names.
std::shared_ptr<HeatmapDecoder> make_heatmap_decoder(const HeatmapDecoderOptions& options,
                                                     Generator& gen);

}  // namespace uwaga::nn
