#include "core/gelu.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/autograd.h"
#include "core/elementwise.h"
#include "core/threads.h"

namespace uwaga {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;    // 1/√2
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/√(2π)
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;  // 2/√π

// ---- float32 fast path ------------------------------------------------------------------------
// glibc's scalar erff and expf keep the compiler from vectorising the loops below, and GELU is
// then a fifth of a ViT training step. In float32 these two stand in for them; they vectorise,
// and their error is below float32's own rounding of GELU (tests/core/test_gelu.cpp compares
// them with std::erf in float64). float64 — gradient checks — keeps std::erf and std::exp.

// e^x = 2^n · e^r with n = round(x / ln 2) and |r| ≤ ln 2 / 2, e^r by its Taylor series to r⁶
// (relative error < 2e-7), 2^n built directly in the exponent bits.
inline float exp_f32(float x) {
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);  // e^x stays a normal float
  const float n = std::floor(x * 1.44269504f + 0.5f);
  const float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;  // ln 2 split in two: exact n·ln2_hi
  float p = 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;
  float two_n;
  std::memcpy(&two_n, &bits, sizeof two_n);
  return p * two_n;
}

// erf(x) ≈ 1 − (a₁t + a₂t² + a₃t³ + a₄t⁴ + a₅t⁵) e^{−x²}, t = 1/(1 + p|x|), odd in x
// (Abramowitz & Stegun 7.1.26, absolute error < 1.5e-7; PyTorch vectorises erf the same way).
inline float erf_f32(float x) {
  const float a = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float poly = 1.061405429f;
  poly = poly * t - 1.453152027f;
  poly = poly * t + 1.421413741f;
  poly = poly * t - 0.284496736f;
  poly = poly * t + 0.254829592f;
  const float y = 1.0f - poly * t * exp_f32(-a * a);
  return std::copysign(y, x);
}

template <class T> T erf_t(T x) {
  if constexpr (std::is_same_v<T, float>) return erf_f32(x);
  else return std::erf(x);
}
template <class T> T exp_t(T x) {
  if constexpr (std::is_same_v<T, float>) return exp_f32(x);
  else return std::exp(x);
}

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
