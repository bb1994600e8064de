#include "nn/max_pool2d.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "core/graph.h"
#include "core/threads.h"

namespace uwaga::nn {

namespace {

// Every (B, C) plane on its own; planes run in parallel. `arg` keeps, for each output, the index
// within its plane of the input it took (what the backward pass needs).
template <class T>
void max_pool_forward(T* y, std::int32_t* arg, const T* x, std::int64_t planes, std::int64_t H,
                      std::int64_t W, std::int64_t Ho, std::int64_t Wo, std::int64_t k,
                      std::int64_t s, std::int64_t p) {
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

}  // namespace

Tensor max_pool2d(const Tensor& x, std::int64_t k, std::int64_t s, std::int64_t p) {
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
    max_pool_forward<T>(y.data<T>(), arg->data(), x.data<T>(), B * C, H, W, Ho, Wo, k, s, p);
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

}  // namespace uwaga::nn
