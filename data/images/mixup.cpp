#include "data/images/mixup.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/shape_ops.h"

namespace uwaga {

void MixOptions::validate() const {
  if (!(mixup_alpha >= 0) || !std::isfinite(mixup_alpha))
    fail("mixup: alpha must be >= 0 (0: off), got ", mixup_alpha);
  if (!(cutmix_alpha >= 0) || !std::isfinite(cutmix_alpha))
    fail("cutmix: alpha must be >= 0 (0: off), got ", cutmix_alpha);
  if (!(probability >= 0 && probability <= 1))
    fail("mixup: the probability of mixing a batch must be in [0, 1], got ", probability);
  if (!(switch_probability >= 0 && switch_probability <= 1))
    fail("mixup: the probability of CutMix must be in [0, 1], got ", switch_probability);
}

double sample_gamma(double shape, Generator& gen) {
  if (!(shape > 0)) fail("sample_gamma: shape must be positive, got ", shape);
  if (shape < 1) {
    // Gamma(a) = Gamma(a + 1) · U^(1/a)   (Marsaglia & Tsang, section 6).
    const double u = 1.0 - gen.uniform();  // in (0, 1]
    return sample_gamma(shape + 1.0, gen) * std::pow(u, 1.0 / shape);
  }
  // Squeeze-and-reject on d (1 + c z)³ with d = a − 1/3, c = 1 / √(9d), z standard normal.
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double z = gen.normal();
    const double v0 = 1.0 + c * z;
    if (v0 <= 0) continue;
    const double v = v0 * v0 * v0;
    const double u = 1.0 - gen.uniform();
    if (u < 1.0 - 0.0331 * z * z * z * z) return d * v;
    if (std::log(u) < 0.5 * z * z + d * (1.0 - v + std::log(v))) return d * v;
  }
}

double sample_beta(double a, double b, Generator& gen) {
  const double x = sample_gamma(a, gen), y = sample_gamma(b, gen);
  return x + y > 0 ? x / (x + y) : 0.5;  // both underflowed (tiny shapes): either end is as likely
}

MixDraw draw_mix(const MixOptions& o, std::int64_t H, std::int64_t W, Generator& gen) {
  o.validate();
  MixDraw d;
  if (!o.enabled() || gen.uniform() >= o.probability) return d;
  d.mixed = true;
  d.cutmix = o.cutmix_alpha > 0 && (o.mixup_alpha <= 0 || gen.uniform() < o.switch_probability);
  if (!d.cutmix) {
    d.lambda = sample_beta(o.mixup_alpha, o.mixup_alpha, gen);
    return d;
  }
  const double lam = sample_beta(o.cutmix_alpha, o.cutmix_alpha, gen);
  // timm's rand_bbox: sides ⌊H √(1 − λ)⌋ and ⌊W √(1 − λ)⌋ about a uniform centre, clipped.
  const double cut = std::sqrt(1.0 - lam);
  const auto cut_h = static_cast<std::int64_t>(H * cut), cut_w = static_cast<std::int64_t>(W * cut);
  const auto cy = static_cast<std::int64_t>(gen.below(static_cast<std::uint64_t>(H)));
  const auto cx = static_cast<std::int64_t>(gen.below(static_cast<std::uint64_t>(W)));
  d.top = std::clamp<std::int64_t>(cy - cut_h / 2, 0, H);
  d.bottom = std::clamp<std::int64_t>(cy + cut_h / 2, 0, H);
  d.left = std::clamp<std::int64_t>(cx - cut_w / 2, 0, W);
  d.right = std::clamp<std::int64_t>(cx + cut_w / 2, 0, W);
  d.lambda = 1.0 - static_cast<double>((d.bottom - d.top) * (d.right - d.left)) /
                       static_cast<double>(H * W);
  return d;
}

Tensor mix_batch(Tensor& images, const Tensor& labels, std::int64_t classes, const MixDraw& d) {
  if (images.dim() != 4 || images.dtype() != DType::Float32)
    fail("mix_batch: images must be float32 (B, C, H, W), got ",
         shape_str(images.shape()));
  const std::int64_t B = images.size(0), C = images.size(1), H = images.size(2),
                     W = images.size(3);
  if (labels.dtype() != DType::Int64 || labels.dim() != 1 || labels.size(0) != B)
    fail("mix_batch: labels must be int64 (", B, ",), got ", shape_str(labels.shape()));
  const std::vector<std::int64_t> y = labels.to_indices();
  for (std::int64_t v : y)
    if (v < 0 || v >= classes) fail("mix_batch: label ", v, " outside 0 .. ", classes - 1);
  Tensor targets = Tensor::zeros({B, classes}, DType::Float32);
  float* t = targets.data<float>();  // (B, classes)
  const double lam = d.mixed ? d.lambda : 1.0;
  for (std::int64_t k = 0; k < B; ++k) {
    t[k * classes + y[k]] += static_cast<float>(lam);
    t[k * classes + y[B - 1 - k]] += static_cast<float>(1.0 - lam);
  }
  if (!d.mixed) return targets;
  // Pairs (k, B − 1 − k) change together, from a copy of the batch as it was.
  const Tensor original = images.clone();
  const float* src = original.data<float>();
  float* x = images.data<float>();  // (B, C, H, W)
  const std::int64_t CHW = C * H * W;
  const float l = static_cast<float>(lam), r = static_cast<float>(1.0 - lam);
  for (std::int64_t k = 0; k < B; ++k) {
    const float* other = src + (B - 1 - k) * CHW;
    float* img = x + k * CHW;
    if (!d.cutmix) {
      for (std::int64_t i = 0; i < CHW; ++i) img[i] = l * img[i] + r * other[i];
      continue;
    }
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t yy = d.top; yy < d.bottom; ++yy)
        for (std::int64_t xx = d.left; xx < d.right; ++xx)
          img[(c * H + yy) * W + xx] = other[(c * H + yy) * W + xx];
  }
  return targets;
}

}  // namespace uwaga
