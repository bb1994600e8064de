#pragma once
// Mixup (Zhang et al. 2018) and CutMix (Yun et al. 2019) of a whole batch, as timm's Mixup in its
// default "batch" mode: one λ for the batch, image k paired with image B − 1 − k (the batch
// reversed), and soft targets
//   y_k = λ onehot(label_k) + (1 − λ) onehot(label_{B−1−k}),
// rows summing to 1, for a cross-entropy on probability targets (nn/soft_target_cross_entropy.h;
// label smoothing is the loss's to add). With probability `probability` the batch is mixed at
// all; then CutMix with probability switch_probability when both are on.
//   Mixup:  x_k ← λ x_k + (1 − λ) x_{B−1−k},  λ ~ Beta(α, α), α = mixup_alpha.
//   CutMix: a box of side fractions √(1 − λ) (λ ~ Beta(α, α), α = cutmix_alpha), centred at a
//           uniform pixel and clipped to the image, is pasted from x_{B−1−k}; λ becomes the share
//           of the image left uncovered, 1 − box area / (H W).
#include <cstdint>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"

namespace uwaga {

struct MixOptions {
  double mixup_alpha = 0.0;   // 0: no mixup
  double cutmix_alpha = 0.0;  // 0: no CutMix
  double probability = 1.0;   // of mixing a batch at all
  double switch_probability = 0.5;  // of CutMix rather than mixup, when both are on

  bool enabled() const { return mixup_alpha > 0 || cutmix_alpha > 0; }
  void validate() const;  // throws naming the bad field
};

// What was drawn for one batch.
struct MixDraw {
  bool mixed = false;   // false: images and labels as they were (λ = 1)
  bool cutmix = false;  // a box pasted, not a blend
  double lambda = 1.0;  // the weight of each image's own label
  std::int64_t top = 0, left = 0, bottom = 0, right = 0;  // CutMix's box [top, bottom) × [left, right)
};

// A Gamma(shape, 1) draw (Marsaglia & Tsang 2000; shape < 1 through Gamma(shape + 1) U^(1/shape)),
// and Beta(a, b) = X / (X + Y) from two of them.
double sample_gamma(double shape, Generator& gen);
double sample_beta(double a, double b, Generator& gen);

MixDraw draw_mix(const MixOptions& options, std::int64_t H, std::int64_t W, Generator& gen);

// Mixes `images` (B, C, H, W) float32 in place as `draw` says and returns the soft targets
// (B, classes) float32 for `labels` (B,) int64.
Tensor mix_batch(Tensor& images, const Tensor& labels, std::int64_t classes, const MixDraw& draw);

}  // namespace uwaga
