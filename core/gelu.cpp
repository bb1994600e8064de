#include "core/gelu.h"

#include <cmath>

#include "core/autograd.h"
#include "core/elementwise.h"
#include "core/fast_math.h"
#include "core/threads.h"

namespace uwaga {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;    // 1/√2
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/√(2π)
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;  // 2/√π

// out_i = f(in_i) for every element, with f called as f(T); in parallel when large.
template <class Fn>
Tensor map_elements(const Tensor& x, const char* op, Fn&& f) {
  Tensor out = Tensor::empty_like(x);
  dispatch_float(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* y = out.data<T>();
    const std::int64_t n = x.numel();
#pragma omp parallel for simd if (n > kParallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = f(in[i]);
  });
  return out;
}

// dx_i = dy_i · f'(x_i): the backward of every elementwise op of one input.
template <class Fn>
Tensor scale_by_derivative(const Tensor& dy, const Tensor& x, const char* op, Fn&& fprime) {
  Tensor dx = Tensor::empty_like(x);
  dispatch_float(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T *in = x.data<T>(), *g = dy.data<T>();
    T* out = dx.data<T>();
    const std::int64_t n = x.numel();
#pragma omp parallel for simd if (n > kParallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) out[i] = g[i] * fprime(in[i]);
  });
  return dx;
}

}  // namespace

// erf(u) = 2/√π ∫₀ᵘ exp(−t²) dt, so d/du erf(u) = 2/√π · exp(−u²).
Tensor erf(const Tensor& x) {
  check_float(x, "erf");
  Tensor out = map_elements(x, "erf", [](auto u) { return std::erf(u); });
  return record(out, "erf", {x}, [x](const Tensor& g) -> std::vector<Tensor> {
    return {scale_by_derivative(g, x, "erf backward", [](auto u) {
      using T = decltype(u);
      return T(kTwoOverSqrtPi) * std::exp(-u * u);
    })};
  });
}

// Forward:   gelu(x) = x Φ(x),  Φ(x) = ½ (1 + erf(x/√2))   (the standard normal CDF)
// Backward:  d/dx [x Φ(x)] = Φ(x) + x Φ'(x) = Φ(x) + x φ(x),  φ(x) = exp(−x²/2) / √(2π)
// So dx = dy · (Φ(x) + x φ(x)); backward needs only the input x, which the node keeps anyway.
Tensor gelu(const Tensor& x) {
  check_float(x, "gelu");
  Tensor out = map_elements(x, "gelu", [](auto v) {
    using T = decltype(v);
    return v * T(0.5) * (T(1) + erf_t(v * T(kInvSqrt2)));
  });
  return record(out, "gelu", {x}, [x](const Tensor& g) -> std::vector<Tensor> {
    return {scale_by_derivative(g, x, "gelu backward", [](auto v) {
      using T = decltype(v);
      const T cdf = T(0.5) * (T(1) + erf_t(v * T(kInvSqrt2)));  // Φ(x)
      const T pdf = T(kInvSqrt2Pi) * exp_t(T(-0.5) * v * v);    // φ(x)
      return cdf + v * pdf;
    })};
  });
}

// The same function from primitives; autograd chains mul, add and erf's own rule.
Tensor gelu_composed(const Tensor& x) {
  check_float(x, "gelu_composed");
  return x * 0.5 * (1.0 + erf(x * kInvSqrt2));
}

}  // namespace uwaga
