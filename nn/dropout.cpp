#include "nn/dropout.h"

#include <cmath>
#include <cstdint>

#include "core/graph.h"
#include "core/threads.h"

namespace uwaga::nn {

// Forward:  y = x ⊙ m,  m_i = 0 with probability p, else 1/(1 − p),  so E[y_i] = x_i.
// Backward: dx = dy ⊙ m — the same mask, saved from the forward pass.
Tensor dropout(const Tensor& x, double p, bool training, Generator& gen) {
  check_float(x, "dropout");
  if (!(p >= 0.0 && p < 1.0))
    fail("dropout: p must be in [0, 1), got ", p, " (p = 1 would drop every element)");
  if (!training || p == 0.0) return x;

  const Tensor mask = dropout_mask(x.shape(), x.dtype(), p, gen);  // (x.shape): 0 or 1/(1 − p)
  const std::int64_t n = x.numel();
  Tensor out = Tensor::empty_like(x);
  dispatch_float(x.dtype(), "dropout", [&](auto tag) {
    using T = decltype(tag);
    const T *in = x.data<T>(), *m = mask.data<T>();
    T* y = out.data<T>();
    parallel_for(n, n > kParallelThreshold, [&](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) y[i] = in[i] * m[i];
    });
  });
  return record(out, "dropout", {x}, [mask](const Tensor& g) -> std::vector<Tensor> {
    Tensor dx = Tensor::empty_like(g);
    dispatch_float(g.dtype(), "dropout backward", [&](auto tag) {
      using T = decltype(tag);
      const T *dy = g.data<T>(), *m = mask.data<T>();
      T* out = dx.data<T>();
      const std::int64_t n = g.numel();
      parallel_for(n, n > kParallelThreshold, [&](std::int64_t i0, std::int64_t i1) {
        for (std::int64_t i = i0; i < i1; ++i) out[i] = dy[i] * m[i];
      });
    });
    return {dx};
  });
}

Tensor dropout_mask(const Shape& shape, DType dtype, double p, Generator& gen) {
  if (!(p >= 0.0 && p < 1.0)) fail("dropout_mask: p must be in [0, 1), got ", p);
  // One sequential loop: element i always takes the i-th draw, so the same seed gives the same
  // mask however many threads later use it.
  // uniform() < p, on the draw's 53 bits k: k · 2^−53 < p  ⇔  k < ⌈p · 2^53⌉ (exact in double),
  // the same mask without a conversion per element.
  const auto below = static_cast<std::uint64_t>(std::ceil(std::ldexp(p, 53)));
  Tensor mask = Tensor::empty(shape, dtype);
  const std::int64_t n = mask.numel();
  dispatch_float(dtype, "dropout_mask", [&](auto tag) {
    using T = decltype(tag);
    const T keep_scale = static_cast<T>(1.0 / (1.0 - p));
    T* m = mask.data<T>();
    for (std::int64_t i = 0; i < n; ++i) m[i] = (gen.next_u64() >> 11) < below ? T(0) : keep_scale;
  });
  return mask;
}

Dropout::Dropout(double p, std::uint64_t seed) : p_(p), gen_(seed) {
  if (!(p >= 0 && p < 1)) fail("Dropout: p must be in [0, 1), got ", p);
}

Tensor Dropout::forward(const Tensor& x) { return dropout(x, p_, is_training(), gen_); }

}  // namespace uwaga::nn
