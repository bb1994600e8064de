#include "nn/pose/keypoint_heatmaps.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace uwaga::nn {
namespace {

constexpr std::int64_t kMaxHeatmapSide = 4096;

void check_geometry(const char* op, std::int64_t heatmap_h, std::int64_t heatmap_w, float stride) {
  check_size_in_range(op, "heatmap_h", heatmap_h, kMaxHeatmapSide);
  check_size_in_range(op, "heatmap_w", heatmap_w, kMaxHeatmapSide);
  if (!(stride > 0) || !std::isfinite(stride))
    fail(op, ": stride must be a positive number, got ", stride);
}

void check_sigma(const char* op, float sigma) {
  if (!(sigma > 0) || !std::isfinite(sigma))
    fail(op, ": sigma must be a positive number of heatmap cells, got ", sigma);
}

// exp(−(c + 0.5 − t)² / (2σ²)) for cells c = 0 … n−1: one axis of the Gaussian.
std::vector<double> gaussian_axis(std::int64_t n, double t, double sigma) {
  std::vector<double> g(static_cast<std::size_t>(n));
  for (std::int64_t c = 0; c < n; ++c) {
    const double d = static_cast<double>(c) + 0.5 - t;
    g[static_cast<std::size_t>(c)] = std::exp(-d * d / (2 * sigma * sigma));
  }
  return g;
}

// One joint's map into out (h·w, row-major). The 2-D Gaussian is the product of two 1-D ones,
// exp(−(a² + b²)/2σ²) = exp(−a²/2σ²)·exp(−b²/2σ²): h + w exponentials instead of h·w.
void draw_gaussian(float* out, std::int64_t h, std::int64_t w, double u, double v, double sigma) {
  const std::vector<double> gx = gaussian_axis(w, u, sigma);  // (w)
  const std::vector<double> gy = gaussian_axis(h, v, sigma);  // (h)
  for (std::int64_t i = 0; i < h; ++i)
    for (std::int64_t j = 0; j < w; ++j)
      out[i * w + j] = static_cast<float>(gy[static_cast<std::size_t>(i)] *
                                          gx[static_cast<std::size_t>(j)]);
}

struct Peak {
  float x, y, score;  // input pixels; the map's maximum
};

// One (h, w) map's peak: arg-max, then the quarter step (see the header).
template <class T>
Peak decode_map(const T* map, std::int64_t h, std::int64_t w, double stride, bool subpixel) {
  std::int64_t best = 0;
  for (std::int64_t p = 1; p < h * w; ++p)
    if (map[p] > map[best]) best = p;  // strict: the first maximum wins ties
  const T m = map[best];
  if (!(m > 0)) return {-1.0f, -1.0f, static_cast<float>(m)};  // nothing found
  const std::int64_t i = best / w, j = best % w;
  double u = static_cast<double>(j) + 0.5, v = static_cast<double>(i) + 0.5;
  if (subpixel) {
    auto quarter = [](T d) { return d > 0 ? 0.25 : d < 0 ? -0.25 : 0.0; };
    if (j > 0 && j < w - 1) u += quarter(map[i * w + j + 1] - map[i * w + j - 1]);
    if (i > 0 && i < h - 1) v += quarter(map[(i + 1) * w + j] - map[(i - 1) * w + j]);
  }
  return {static_cast<float>(u * stride), static_cast<float>(v * stride), static_cast<float>(m)};
}

// The peaks of every map of heatmaps (…, K, h, w), in row-major order of the leading dims.
std::vector<Peak> decode_all(const Tensor& heatmaps, float stride, bool subpixel, const char* op) {
  const std::int64_t h = heatmaps.size(-2), w = heatmaps.size(-1), n = heatmaps.numel() / (h * w);
  check_geometry(op, h, w, stride);
  std::vector<Peak> peaks(static_cast<std::size_t>(n));
  dispatch_float(heatmaps.dtype(), op, [&](auto t) {
    using T = decltype(t);
    const T* maps = heatmaps.data<T>();  // (n, h, w)
    for (std::int64_t p = 0; p < n * h * w; ++p)
      if (std::isnan(maps[p]))
        fail(op, ": heatmap ", p / (h * w), " of ", n, " (shape ", shape_str(heatmaps.shape()),
             ") holds NaN");
    for (std::int64_t m = 0; m < n; ++m)
      peaks[static_cast<std::size_t>(m)] = decode_map(maps + m * h * w, h, w, stride, subpixel);
  });
  return peaks;
}

}  // namespace

Tensor gaussian_heatmaps(const std::vector<float>& x, const std::vector<float>& y,
                         const std::vector<std::uint8_t>& visible, std::int64_t heatmap_h,
                         std::int64_t heatmap_w, float stride, float sigma) {
  check_geometry("gaussian_heatmaps", heatmap_h, heatmap_w, stride);
  check_sigma("gaussian_heatmaps", sigma);
  if (x.empty() || y.size() != x.size() || visible.size() != x.size())
    fail("gaussian_heatmaps: x, y and visible must hold one entry per joint, got ", x.size(),
         ", ", y.size(), " and ", visible.size());
  const auto K = static_cast<std::int64_t>(x.size());
  Tensor maps = Tensor::zeros({K, heatmap_h, heatmap_w});  // (K, h, w)
  float* out = maps.data<float>();
  for (std::int64_t k = 0; k < K; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    if (!visible[kk]) continue;  // zero map
    if (!std::isfinite(x[kk]) || !std::isfinite(y[kk]))
      fail("gaussian_heatmaps: visible joint ", k, " is at (", x[kk], ", ", y[kk],
           "); expected finite input-pixel coordinates");
    draw_gaussian(out + k * heatmap_h * heatmap_w, heatmap_h, heatmap_w,
                  static_cast<double>(x[kk]) / stride, static_cast<double>(y[kk]) / stride, sigma);
  }
  return maps;
}

Tensor gaussian_heatmaps_batch(const Tensor& keypoints, std::int64_t heatmap_h,
                               std::int64_t heatmap_w, float stride, float sigma) {
  check_defined(keypoints, "gaussian_heatmaps_batch");
  if (keypoints.dim() != 3 || keypoints.size(2) != 3 || keypoints.size(1) < 1)
    fail("gaussian_heatmaps_batch: keypoints must be (B, K, 3) holding x, y, visible, got shape ",
         shape_str(keypoints.shape()));
  check_geometry("gaussian_heatmaps_batch", heatmap_h, heatmap_w, stride);
  check_sigma("gaussian_heatmaps_batch", sigma);
  const std::int64_t B = keypoints.size(0), K = keypoints.size(1);
  const std::vector<double> kp = keypoints.to_vector();  // (B, K, 3)
  Tensor maps = Tensor::empty({B, K, heatmap_h, heatmap_w});  // (B, K, h, w)
  for (std::int64_t b = 0; b < B; ++b) {
    std::vector<float> x(static_cast<std::size_t>(K)), y(x.size());
    std::vector<std::uint8_t> visible(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) {
      const std::size_t at = (static_cast<std::size_t>(b) * x.size() + k) * 3;
      x[k] = static_cast<float>(kp[at]);
      y[k] = static_cast<float>(kp[at + 1]);
      visible[k] = kp[at + 2] != 0;
    }
    const Tensor one = gaussian_heatmaps(x, y, visible, heatmap_h, heatmap_w, stride, sigma);
    std::copy(one.data<float>(), one.data<float>() + one.numel(),
              maps.data<float>() + b * one.numel());
  }
  return maps;
}

DecodedKeypoints decode_heatmaps(const Tensor& heatmaps, float stride, bool subpixel) {
  check_defined(heatmaps, "decode_heatmaps");
  if (heatmaps.dim() != 3 || heatmaps.numel() == 0)
    fail("decode_heatmaps: heatmaps must be (K, h, w) with no empty dimension, got shape ",
         shape_str(heatmaps.shape()));
  DecodedKeypoints out;
  for (const Peak& p : decode_all(heatmaps, stride, subpixel, "decode_heatmaps")) {
    out.x.push_back(p.x);
    out.y.push_back(p.y);
    out.score.push_back(p.score);
  }
  return out;
}

Tensor decode_heatmaps_batch(const Tensor& heatmaps, float stride, bool subpixel) {
  check_defined(heatmaps, "decode_heatmaps_batch");
  if (heatmaps.dim() != 4 || heatmaps.numel() == 0)
    fail("decode_heatmaps_batch: heatmaps must be (B, K, h, w) with no empty dimension, got "
         "shape ", shape_str(heatmaps.shape()));
  const std::vector<Peak> peaks = decode_all(heatmaps, stride, subpixel, "decode_heatmaps_batch");
  Tensor out = Tensor::empty({heatmaps.size(0), heatmaps.size(1), 3});  // (B, K, 3): x, y, score
  float* o = out.data<float>();
  for (const Peak& p : peaks) {
    *o++ = p.x;
    *o++ = p.y;
    *o++ = p.score;
  }
  return out;
}

}  // namespace uwaga::nn
