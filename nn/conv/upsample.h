#pragma once
// Bilinear upsampling of NCHW feature maps by an integer factor f, as PyTorch's
//   F.interpolate(x, scale_factor=f, mode="bilinear", align_corners=False)
// (B, C, H, W) -> (B, C, H·f, W·f).
//
// The convention (align_corners=False, "half-pixel centres"): pixels are unit squares and a
// pixel's value sits at its centre, so output index d along an axis has its centre at (d + 0.5)/f
// input pixels, i.e. at source coordinate
//   src = (d + 0.5)/f − 0.5,   clamped at 0 (PyTorch clamps below only),
// between input pixels i0 = ⌊src⌋ and i1 = min(i0 + 1, n − 1), with weights
//   λ1 = src − i0,   λ0 = 1 − λ1,
// so the outermost output pixels repeat the edge values. The 2-D value is the product of the two
// axes' interpolations:
//   y[d, e] = Σ_{a, b ∈ {0, 1}} λ_a(d) μ_b(e) x[i_a(d), j_b(e)]
// (align_corners=True would instead map d to d·(n − 1)/(n·f − 1), pinning the corner pixels.)
//
// upsample_bilinear is one autograd node with the hand-derived backward of upsample.cpp;
// upsample_bilinear_composed writes the same map as two matrix products, Y = A_H · X · A_Wᵀ, with
// the interpolation matrices A built from the same taps, so autograd derives its gradient — the
// tests compare the two.
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace uwaga::nn {

// x (B, C, H, W), factor ≥ 1 -> (B, C, H·factor, W·factor).
Tensor upsample_bilinear(const Tensor& x, std::int64_t factor);
Tensor upsample_bilinear_composed(const Tensor& x, std::int64_t factor);

// One axis of the interpolation: output index d reads input indices i0[d] and i1[d] with weights
// w0[d] + w1[d] = 1.
struct BilinearTaps {
  std::vector<std::int64_t> i0, i1;
  std::vector<double> w0, w1;
};
// The taps for an axis of `size` input pixels upsampled by `factor` (size·factor outputs).
BilinearTaps bilinear_taps(std::int64_t size, std::int64_t factor);

}  // namespace uwaga::nn
