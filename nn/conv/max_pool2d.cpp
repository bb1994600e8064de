#include "nn/conv/max_pool2d.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/graph.h"
#include "core/threads.h"

namespace uwaga::nn {

namespace {

// The definition, one window at a time: every (B, C) plane on its own, planes in parallel. `arg`
// keeps, for each output, the index within its plane of the input it took (what the backward pass
// needs). The branches on each value make it slow (they follow the data), hence max_pool_forward.
template <class T>
void max_pool_forward_reference(T* y, std::int32_t* arg, const T* x, std::int64_t planes,
                                std::int64_t H, std::int64_t W, std::int64_t Ho, std::int64_t Wo,
                                std::int64_t k, std::int64_t s, std::int64_t p) {
  parallel_for(planes, planes * Ho * Wo * k * k > kParallelThreshold,
               [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t q = p0; q < p1; ++q) {
      const T* xq = x + q * H * W;
      for (std::int64_t i = 0; i < Ho; ++i) {
        const std::int64_t m0 = std::max<std::int64_t>(i * s - p, 0);
        const std::int64_t m1 = std::min(i * s - p + k, H);
        for (std::int64_t j = 0; j < Wo; ++j) {
          const std::int64_t n0 = std::max<std::int64_t>(j * s - p, 0);
          const std::int64_t n1 = std::min(j * s - p + k, W);
          std::int64_t best = m0 * W + n0;
          T top = xq[best];
          for (std::int64_t m = m0; m < m1; ++m)
            for (std::int64_t n = n0; n < n1; ++n) {
              const T v = xq[m * W + n];
              if (v > top || std::isnan(v)) {  // strictly greater: the first maximum stays
                top = v, best = m * W + n;
                if (std::isnan(v)) goto found;
              }
            }
        found:
          y[(q * Ho + i) * Wo + j] = top;
          arg[(q * Ho + i) * Wo + j] = static_cast<std::int32_t>(best);
        }
      }
    }
  });
}

// The order the maximum is taken in: a NaN above every number, and between equal values (or two
// NaNs) the one first in raster order, the smaller index a within the plane. It is a total order,
// so its maximum can be taken in any grouping, and it picks what the scan above picks. Written
// without branches (| and & on bools), so that the compiler turns whole loops of it into vector
// compares and blends.
template <class T>
inline bool beats(T v, std::int32_t a, T top, std::int32_t best) {
  const bool v_nan = v != v, top_nan = top != top;
  const bool same = (v == top) | (v_nan & top_nan);
  return (v > top) | (v_nan & !top_nan) | (same & (a < best));
}

// Pass 2 below at stride 2: the padded column maxima u = 0 … L − 1 split into even and odd
// halves, so that window offset v of output j, u = 2j + v, is half (v mod 2)'s entry j + ⌊v/2⌋ —
// contiguous in j, where u itself strides by 2. The same comparisons in the same order as the
// general loop, so the same picks.
template <class T>
struct StrideTwoHalves {
  explicit StrideTwoHalves(std::size_t L)
      : top{std::vector<T>((L + 1) / 2), std::vector<T>(L / 2)},
        at{std::vector<std::int32_t>((L + 1) / 2), std::vector<std::int32_t>(L / 2)} {}
  std::vector<T> top[2];
  std::vector<std::int32_t> at[2];
};

template <class T>
void window_maxima_stride2(T* yi, std::int32_t* ai, const T* padded_top,
                           const std::int32_t* padded_at, std::size_t L, std::int64_t Wo,
                           std::int64_t k, StrideTwoHalves<T>& h) {
  // Split into the halves: loops over plain pointers, which the compiler turns into two-vector
  // loads and permutes (indexing the vectors by u % 2 kept it one scalar at a time).
  T* even_top = h.top[0].data();
  T* odd_top = h.top[1].data();
  std::int32_t* even_at = h.at[0].data();
  std::int32_t* odd_at = h.at[1].data();
  for (std::size_t j = 0; j < L / 2; ++j) {
    even_top[j] = padded_top[2 * j], odd_top[j] = padded_top[2 * j + 1];
    even_at[j] = padded_at[2 * j], odd_at[j] = padded_at[2 * j + 1];
  }
  if (L % 2 == 1) even_top[L / 2] = padded_top[L - 1], even_at[L / 2] = padded_at[L - 1];
  for (std::int64_t j = 0; j < Wo; ++j) yi[j] = h.top[0][j], ai[j] = h.at[0][j];
  for (std::int64_t v = 1; v < k; ++v) {
    const T* top = h.top[v % 2].data() + v / 2;
    const std::int32_t* at = h.at[v % 2].data() + v / 2;
    for (std::int64_t j = 0; j < Wo; ++j) {
      const bool take = beats(top[j], at[j], yi[j], ai[j]);
      yi[j] = take ? top[j] : yi[j];
      ai[j] = take ? at[j] : ai[j];
    }
  }
}

// The same maximum in two passes per output row, a k×k window being a k-tall column of a k-wide
// row: (1) down the window's rows, each image column's maximum (and its index), all W columns at
// once, which vectorises; (2) across the window's columns, from those. Pass 2 reads padded column
// maxima: p entries either side hold −∞ with an index past every pixel, so that they lose to
// anything in the image, −∞ included (every window holds a pixel of the image, p ≤ k/2).
template <class T>
void max_pool_forward(T* y, std::int32_t* arg, const T* x, std::int64_t planes, std::int64_t H,
                      std::int64_t W, std::int64_t Ho, std::int64_t Wo, std::int64_t k,
                      std::int64_t s, std::int64_t p) {
  parallel_for(planes, planes * Ho * Wo * k * k > kParallelThreshold,
               [&](std::int64_t p0, std::int64_t p1) {
    constexpr std::int32_t kOutside = std::numeric_limits<std::int32_t>::max();
    std::vector<T> top(static_cast<std::size_t>(W + 2 * p), -std::numeric_limits<T>::infinity());
    std::vector<std::int32_t> at(top.size(), kOutside);
    T* column_top = top.data() + p;  // column_top[n], n in [−p, W + p)
    std::int32_t* column_at = at.data() + p;
    StrideTwoHalves<T> halves(top.size());
    for (std::int64_t q = p0; q < p1; ++q) {
      const T* xq = x + q * H * W;
      for (std::int64_t i = 0; i < Ho; ++i) {
        const std::int64_t m0 = std::max<std::int64_t>(i * s - p, 0);
        const std::int64_t m1 = std::min(i * s - p + k, H);
        for (std::int64_t n = 0; n < W; ++n) {  // (1)
          column_top[n] = xq[m0 * W + n];
          column_at[n] = static_cast<std::int32_t>(m0 * W + n);
        }
        for (std::int64_t m = m0 + 1; m < m1; ++m)
          for (std::int64_t n = 0; n < W; ++n) {
            const T v = xq[m * W + n];
            const auto a = static_cast<std::int32_t>(m * W + n);
            const bool take = beats(v, a, column_top[n], column_at[n]);
            column_top[n] = take ? v : column_top[n];
            column_at[n] = take ? a : column_at[n];
          }
        T* yi = y + (q * Ho + i) * Wo;
        std::int32_t* ai = arg + (q * Ho + i) * Wo;
        if (s == 2) {  // (2) at stride 2 (CCT's pooling): the same steps on contiguous halves
          window_maxima_stride2(yi, ai, top.data(), at.data(), top.size(), Wo, k, halves);
          continue;
        }
        for (std::int64_t j = 0; j < Wo; ++j) {  // (2), the window's first column
          yi[j] = column_top[j * s - p];
          ai[j] = column_at[j * s - p];
        }
        for (std::int64_t v = 1; v < k; ++v)  // and its others, one at a time for all j
          for (std::int64_t j = 0; j < Wo; ++j) {
            const std::int64_t n = j * s - p + v;
            const bool take = beats(column_top[n], column_at[n], yi[j], ai[j]);
            yi[j] = take ? column_top[n] : yi[j];
            ai[j] = take ? column_at[n] : ai[j];
          }
      }
    }
  });
}

// dx = 0, then each output's gradient added to the input it took: planes in parallel, each
// plane's outputs in order, so the sums do not depend on the thread count.
template <class T>
void max_pool_backward(T* dx, const T* dy, const std::int32_t* arg, std::int64_t planes,
                       std::int64_t HW, std::int64_t HoWo) {
  parallel_for(planes, planes * HoWo > kParallelThreshold, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t q = p0; q < p1; ++q) {
      T* dxq = dx + q * HW;
      std::fill(dxq, dxq + HW, T(0));
      const T* g = dy + q * HoWo;
      const std::int32_t* a = arg + q * HoWo;
      for (std::int64_t o = 0; o < HoWo; ++o) dxq[a[o]] += g[o];
    }
  });
}

// Checks the arguments, runs `forward` (one of the two kernels above) and records the node.
template <class Forward>
Tensor max_pool2d_with(const Tensor& x, std::int64_t k, std::int64_t s, std::int64_t p,
                       Forward forward) {
  check_float(x, "max_pool2d");
  if (x.dim() != 4) fail("max_pool2d: input must be (B, C, H, W), got ", shape_str(x.shape()));
  if (k < 1 || s < 1 || p < 0 || 2 * p > k)
    fail("max_pool2d: kernel ", k, ", stride ", s, " and padding ", p,
         " must have kernel ≥ 1, stride ≥ 1 and 0 ≤ padding ≤ kernel/2");
  const std::int64_t B = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  if (H + 2 * p < k || W + 2 * p < k)
    fail("max_pool2d: input ", shape_str(x.shape()), " padded by ", p,
         " is smaller than the kernel ", k);
  if (H * W > (std::int64_t{1} << 31) - 1)
    fail("max_pool2d: input ", shape_str(x.shape()), " has a plane of over 2³¹ pixels");
  init_threads();
  const std::int64_t Ho = (H + 2 * p - k) / s + 1, Wo = (W + 2 * p - k) / s + 1;
  Tensor y = Tensor::empty({B, C, Ho, Wo}, x.dtype());
  auto arg = std::make_shared<std::vector<std::int32_t>>(static_cast<std::size_t>(B * C * Ho * Wo));
  dispatch_float(x.dtype(), "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    forward(y.data<T>(), arg->data(), x.data<T>(), B * C, H, W, Ho, Wo, k, s, p);
  });
  return record(y, "max_pool2d", {x}, [x, arg, B, C, H, W, Ho, Wo](const Tensor& dy) {
    Tensor dx = Tensor::empty(x.shape(), x.dtype());
    dispatch_float(dy.dtype(), "max_pool2d", [&](auto tag) {
      using T = decltype(tag);
      max_pool_backward<T>(dx.data<T>(), dy.data<T>(), arg->data(), B * C, H * W, Ho * Wo);
    });
    return std::vector<Tensor>{dx};
  });
}

}  // namespace

Tensor max_pool2d(const Tensor& x, std::int64_t kernel, std::int64_t stride, std::int64_t padding) {
  return max_pool2d_with(x, kernel, stride, padding,
                         [](auto... args) { max_pool_forward(args...); });
}

Tensor max_pool2d_reference(const Tensor& x, std::int64_t kernel, std::int64_t stride,
                            std::int64_t padding) {
  return max_pool2d_with(x, kernel, stride, padding,
                         [](auto... args) { max_pool_forward_reference(args...); });
}

}  // namespace uwaga::nn
