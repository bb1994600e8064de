#include "nn/gelu.h"

#include <cmath>
#include <type_traits>

#include "core/elementwise.h"
#include "core/fast_math.h"
#include "core/graph.h"
#include "core/threads.h"

namespace uwaga::nn {

// Forward:   gelu(x) = x Φ(x),  Φ(x) = ½ (1 + erf(x/√2))   (the standard normal CDF)
// Backward:  d/dx [x Φ(x)] = Φ(x) + x Φ'(x) = Φ(x) + x φ(x),  φ(x) = exp(−x²/2) / √(2π)
// So dx = dy · (Φ(x) + x φ(x)). erf(x/√2) needs exp(−x²/2) anyway, which is φ up to a constant,
// so the derivative costs little beside Φ: the backward pass computes it again from x (which the
// graph keeps as the op's input) rather than the forward pass storing it — the backward pass
// reads x and dy either way, and the forward pass writes one tensor instead of two.
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;    // 1/√2
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/√(2π)

// Beyond ±X GELU takes its limits: gelu(x) = x and gelu'(x) = 1 for x > X, and 0 and 0 for
// x < −X. At ±X the formula already gives Φ = 1 or 0 exactly, and X φ(X) (1e-36 in float32, 0
// in float64) is lost against 1 and negligible against 0, so the limits are what the formula
// gives there, to rounding. Without the clamp it goes wrong far out:
//   float32: exp_f32 stops at e^−87 rather than underflowing, so from |x| > √174 ≈ 13.2 on,
//            φ(x) stays at 6.6e-39 and x φ(x) grows with |x|: gelu'(±1e31) is off by 1e-7,
//            gelu'(1e38) = 1.66 and gelu'(−1e38) = −0.66; at ±∞ gelu(−∞) = −∞ · 0 = NaN and
//            gelu'(∞) = ∞. Hence X = 13, where e^−84.5 is still exact.
//   float64: φ(x) underflows to 0 from |x| ≈ 38.6 on, which is right for every finite x, but
//            at ±∞, x φ(x) = ∞ · 0 = NaN, and so is gelu(−∞). X = 40.
// With lo = max(x, −X) and c = min(lo, X) (NaN stays NaN), gelu = lo Φ(c) takes both limits
// (lo Φ(c) = x for x > X, −X · 0 = 0 below −X); gelu' = Φ(c) + c φ(c) gives 1 above X and is
// set to 0 below −X. Clamping costs nothing measurable: it lets exp skip its own clamp.
template <class T> constexpr T kGeluLimit = std::is_same_v<T, float> ? T(13) : T(40);

// Forward (dy null): out = gelu(x). Backward: out = dy · gelu'(x).
template <class T, bool kBackward>
void gelu_pass(const T* x, const T* dy, T* out, std::int64_t n) {
  constexpr T X = kGeluLimit<T>;
  parallel_for(n, n > kParallelThreshold, [&](std::int64_t i0, std::int64_t i1) {
#pragma omp simd
    for (std::int64_t i = i0; i < i1; ++i) {
      const T v = x[i];
      const T lo = v < -X ? -X : v;
      const T c = lo > X ? X : lo;
      T cdf, pdf;
      if constexpr (std::is_same_v<T, float>) {
        const float e = exp_f32_in_range(-0.5f * c * c);  // exp(−x²/2) = exp(−(x/√2)²)
        cdf = 0.5f * (1.0f + erf_f32_given(c * float(kInvSqrt2), e));
        pdf = float(kInvSqrt2Pi) * e;
      } else {
        cdf = T(0.5) * (T(1) + std::erf(c * T(kInvSqrt2)));
        pdf = T(kInvSqrt2Pi) * std::exp(T(-0.5) * c * c);
      }
      if constexpr (kBackward)
        out[i] = dy[i] * (v < -X ? T(0) : cdf + c * pdf);
      else
        out[i] = lo * cdf;
    }
  });
}
template <class T>
void gelu_kernel(const T* x, const T* dy, T* out, std::int64_t n) {
  dy ? gelu_pass<T, true>(x, dy, out, n) : gelu_pass<T, false>(x, nullptr, out, n);
}

// Forward:   gelu_tanh(x) = ½ x (1 + t),  t = tanh(u),  u = k (x + a x³),  k = √(2/π), a = 0.044715
// Backward:  d/dx = ½ (1 + t) + ½ x (1 − t²) · du/dx,  du/dx = k (1 + 3 a x²)   (tanh′ = 1 − tanh²)
// Computed again from x in the backward pass, as with gelu. Beyond ±X the limits again: x (and 1)
// above X, 0 (and 0) below −X, where 1 + t has underflowed to 0 and t to 1 already (X = 10:
// u = ±44; float64 X = 20, u = ±301), so only ±∞ (∞ · 0 = NaN otherwise) is affected.
// Forward (dy null): out = gelu_tanh(x). Backward: out = dy · gelu_tanh'(x). Written as
// gelu_pass is — one pass each way, the limits as selects on a clamped c, no branch — so that it
// vectorises: the loop with branches and a test of dy inside ran at a tenth of gelu's rate.
template <class T, bool kBackward>
void gelu_tanh_pass(const T* x, const T* dy, T* out, std::int64_t n) {
  constexpr T X = std::is_same_v<T, float> ? T(10) : T(20);
  constexpr T k = T(0.79788456080286535588), a = T(0.044715);
  parallel_for(n, n > kParallelThreshold, [&](std::int64_t i0, std::int64_t i1) {
#pragma omp simd
    for (std::int64_t i = i0; i < i1; ++i) {
      const T v = x[i];
      const T lo = v < -X ? -X : v;
      const T c = lo > X ? X : lo;  // x itself inside ±X (NaN stays NaN)
      const T t = tanh_t(k * (c + a * c * c * c));  // core/fast_math.h
      if constexpr (kBackward) {
        const T slope = T(0.5) * (T(1) + t) + T(0.5) * c * (T(1) - t * t) * k * (T(1) + T(3) * a * c * c);
        out[i] = dy[i] * (v < -X ? T(0) : v > X ? T(1) : slope);
      } else {
        out[i] = v < -X ? T(0) : v > X ? v : T(0.5) * v * (T(1) + t);
      }
    }
  });
}
template <class T>
void gelu_tanh_kernel(const T* x, const T* dy, T* out, std::int64_t n) {
  dy ? gelu_tanh_pass<T, true>(x, dy, out, n) : gelu_tanh_pass<T, false>(x, nullptr, out, n);
}

// The op `name` of `kernel` (above): the forward pass, and a backward rule that reads x and dy.
template <template <class> class Kernel>
Tensor gelu_op(const Tensor& x, const char* name) {
  check_float(x, name);
  Tensor out = Tensor::empty_like(x);
  dispatch_float(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    Kernel<T>::run(x.data<T>(), nullptr, out.data<T>(), x.numel());
  });
  if (!needs_grad({&x})) return out;
  return record(out, name, {x}, [x, name](const Tensor& g) -> std::vector<Tensor> {
    Tensor dx = Tensor::empty_like(x);
    dispatch_float(x.dtype(), name, [&](auto tag) {
      using T = decltype(tag);
      Kernel<T>::run(x.data<T>(), g.data<T>(), dx.data<T>(), x.numel());
    });
    return {dx};
  });
}
template <class T> struct Erf { static constexpr auto run = &gelu_kernel<T>; };
template <class T> struct Tanh { static constexpr auto run = &gelu_tanh_kernel<T>; };

}  // namespace

Tensor gelu(const Tensor& x) { return gelu_op<Erf>(x, "gelu"); }

// The same function from primitives; autograd chains mul, add and erf's own rule.
Tensor gelu_composed(const Tensor& x) {
  check_float(x, "gelu_composed");
  return x * 0.5 * (1.0 + erf(x * kInvSqrt2));
}

Tensor gelu_tanh(const Tensor& x) { return gelu_op<Tanh>(x, "gelu_tanh"); }

// The same function from primitives; autograd chains mul, add and tanh's own rule.
Tensor gelu_tanh_composed(const Tensor& x) {
  check_float(x, "gelu_tanh_composed");
  const double k = 0.79788456080286535588;  // √(2/π)
  return x * 0.5 * (1.0 + tanh((x + x * x * x * 0.044715) * k));
}

Tensor GELU::forward(const Tensor& x) const {
  return approximate == GeluApproximation::tanh ? gelu_tanh(x) : gelu(x);
}

}  // namespace uwaga::nn
