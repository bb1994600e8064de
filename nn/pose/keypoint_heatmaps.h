#pragma once
// Keypoint heatmaps: how a top-down pose model (ViTPose; SimpleBaseline, Xiao et al. 2018) is told
// where each joint is, and how its answer is read back.
//
// Coordinates. A joint's (x, y) is in input pixels, continuous: pixel column i spans [i, i + 1),
// so the centre of the top-left pixel is (0.5, 0.5). The heatmap sees the input at stride s (a
// ViT's patch size): cell j spans input [j·s, (j + 1)·s), so a joint maps to heatmap coordinates
//   u = x / s,  v = y / s        and cell (row i, column j) is centred at (j + 0.5, i + 0.5),
// the centre of the s × s input pixels it covers. (mmpose puts pixel centres at integers, u = x/s
// with cell j centred at j; the rule here makes encoding and decoding exact inverses at every
// stride, and a patch's cell sits on its own pixels.)
//
// Encoding: one Gaussian per joint, σ in heatmap cells, centred on the joint's exact (sub-cell)
// position — the MSRA heatmap with DARK's unbiased centre (Zhang et al. 2020; mmpose's
// unbiased_encoding), over the whole map:
//   H_k(i, j) = exp(−((j + 0.5 − u_k)² + (i + 0.5 − v_k)²) / (2σ²))
// Its peak, 1, is at the joint; a cell holds exactly 1 only when the joint is at its centre. An
// invisible joint gets an all-zero map (and weight 0 in the loss, nn/loss.h).
//
// Decoding (HRNet's and ViTPose's get_final_preds): the arg-max cell (i*, j*) — the first in
// row-major order on ties, as NumPy's argmax — whose value m is the joint's score; then a quarter
// cell toward the higher neighbour on each axis,
//   u = j* + 0.5 + ¼ sign(H(i*, j* + 1) − H(i*, j* − 1)),  likewise v;   x = u·s, y = v·s.
// On a clean Gaussian the arg-max alone is up to half a cell off; the quarter step brings that to
// at most a quarter cell per axis (the higher neighbour is on the joint's side). Two departures
// from the reference: an axis is refined wherever both its neighbours exist (0 < j* < w − 1),
// where the reference needs 1 < j* < w − 1 and 1 < i* < h − 1 to refine either axis; and a map
// whose maximum is ≤ 0 (nothing found, e.g. all zero) decodes to (−1, −1) in input pixels with
// score m, where the reference puts −1 in heatmap cells.
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace uwaga::nn {

// (K, h, w) float32: one Gaussian map per joint. x, y (K) in input pixels; visible (K), nonzero for
// a visible joint (only those need finite coordinates); stride s > 0; sigma σ > 0 in cells.
Tensor gaussian_heatmaps(const std::vector<float>& x, const std::vector<float>& y,
                         const std::vector<std::uint8_t>& visible, std::int64_t heatmap_h,
                         std::int64_t heatmap_w, float stride, float sigma);

// The same for a batch: keypoints (B, K, 3) holding x, y, visible → (B, K, h, w) float32.
Tensor gaussian_heatmaps_batch(const Tensor& keypoints, std::int64_t heatmap_h,
                               std::int64_t heatmap_w, float stride, float sigma);

struct DecodedKeypoints {
  std::vector<float> x, y;   // (K) input pixels
  std::vector<float> score;  // (K) the maximum of each map (mmpose's maxvals)
};

// heatmaps (K, h, w), float32 or float64. subpixel = false skips the quarter step (for comparison).
DecodedKeypoints decode_heatmaps(const Tensor& heatmaps, float stride, bool subpixel = true);

// heatmaps (B, K, h, w) → (B, K, 3) float32 holding x, y, score.
Tensor decode_heatmaps_batch(const Tensor& heatmaps, float stride, bool subpixel = true);

}  // namespace uwaga::nn
