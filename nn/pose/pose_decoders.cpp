#include "nn/pose/pose_decoders.h"

#include "core/elementwise.h"
#include "nn/init.h"
#include "nn/conv/upsample.h"

namespace uwaga::nn {

std::vector<std::string> HeatmapDecoderOptions::kinds() { return {"classic", "simple"}; }

void check_heatmap_decoder_kind(const std::string& kind, const char* what) {
  bool known = false;
  std::string names;
  for (const std::string& k : HeatmapDecoderOptions::kinds()) {
    known |= k == kind;
    names += (names.empty() ? "" : ", ") + k;
  }
  if (!known) fail(what, ": unknown decoder '", kind, "'; expected one of: ", names);
}

void HeatmapDecoderOptions::validate() const {
  check_heatmap_decoder_kind(kind, "heatmap decoder");
  check_size_in_range("heatmap decoder", "in_channels", in_channels, 65536);
  check_size_in_range("heatmap decoder", "channels", channels, 65536);
  check_size_in_range("heatmap decoder", "joints", joints, 10000);
}

ClassicDecoder::ClassicDecoder(const HeatmapDecoderOptions& o, Generator& gen) : options(o) {
  options.validate();
  const ConvTranspose2dOptions doubling{.stride = 2, .padding = 1, .output_padding = 0,
                                        .bias = false};  // (h, w) -> (2h, 2w) with a 4×4 kernel
  deconv1 = register_module("deconv_layers.0",
                            std::make_shared<ConvTranspose2d>(o.in_channels, o.channels, 4,
                                                              doubling, gen));
  bn1 = register_module("deconv_layers.1", std::make_shared<BatchNorm2d>(o.channels));
  deconv2 = register_module("deconv_layers.3",
                            std::make_shared<ConvTranspose2d>(o.channels, o.channels, 4,
                                                              doubling, gen));
  bn2 = register_module("deconv_layers.4", std::make_shared<BatchNorm2d>(o.channels));
  final_layer = register_module(
      "final_layer", std::make_shared<Conv2d>(o.channels, o.joints, 1, Conv2dOptions{}, gen));
  // mmpose's init (the layers drew PyTorch's default first; these replace it).
  init::normal(deconv1->weight, gen, 0.001);
  init::normal(deconv2->weight, gen, 0.001);
  init::normal(final_layer->weight, gen, 0.001);
  init::zeros(final_layer->bias);
}

Tensor ClassicDecoder::forward(const Tensor& features) {
  Tensor x = relu(bn1->forward(deconv1->forward(features)));  // (B, c, 2h, 2w)
  x = relu(bn2->forward(deconv2->forward(x)));                // (B, c, 4h, 4w)
  return final_layer->forward(x);                             // (B, K, 4h, 4w)
}

SimpleDecoder::SimpleDecoder(const HeatmapDecoderOptions& o, Generator& gen) : options(o) {
  options.validate();
  final_layer = register_module(
      "final_layer",
      std::make_shared<Conv2d>(o.in_channels, o.joints, 3, Conv2dOptions{.padding = 1}, gen));
  init::normal(final_layer->weight, gen, 0.001);
  init::zeros(final_layer->bias);
}

Tensor SimpleDecoder::forward(const Tensor& features) {
  Tensor x = upsample_bilinear(relu(features), 4);  // (B, D, 4h, 4w)
  return final_layer->forward(x);                   // (B, K, 4h, 4w)
}

std::shared_ptr<HeatmapDecoder> make_heatmap_decoder(const HeatmapDecoderOptions& options,
                                                     Generator& gen) {
  options.validate();
  if (options.kind == "simple") return std::make_shared<SimpleDecoder>(options, gen);
  return std::make_shared<ClassicDecoder>(options, gen);
}

}  // namespace uwaga::nn
