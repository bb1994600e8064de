#pragma once
// exp, erf and tanh that the compiler can vectorise. glibc's scalar expf, erff and tanhf keep
// loops from vectorising, and GELU and the attention softmax then take a large share of a training
// step. In float32, exp_t, erf_t and tanh_t use the polynomials below: exp within a few float32
// roundings, erf within 6e-7 absolute, tanh within 4e-7 absolute (tests/core/test_fast_math.cpp
// compares them with std::exp, std::erf and std::tanh in float64). In float64 — gradient checks —
// they are std::exp, std::erf and std::tanh.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace uwaga {

// e^x = 2^n · e^r with n = round(x / ln 2) and |r| ≤ ln 2 / 2, e^r by its Taylor series to r⁶
// (relative error < 2e-7), 2^n built directly in the exponent bits. Only for −87 ≤ x ≤ 88, where
// e^x is a normal float: for a caller that has already bounded x (GELU clamps its input), since
// a second clamp in the same loop makes GCC's vectorised code a third slower.
inline float exp_f32_in_range(float x) {
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

// e^x for any x. Arguments below −87 give e^−87 ≈ 1.6e-38 rather than a denormal or 0.
inline float exp_f32(float x) {
  return exp_f32_in_range(x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x));
}

// e^x for x ≤ 0 (or NaN), as exp_f32 gives it: a softmax's e − max(e) is never above 0, so only
// the lower clamp is needed, and the upper one's compare and blend were a sixth of the loop.
inline float exp_f32_nonpositive(float x) { return exp_f32_in_range(x < -87.0f ? -87.0f : x); }

// erf(x) ≈ 1 − (a₁t + a₂t² + a₃t³ + a₄t⁴ + a₅t⁵) e^{−x²}, t = 1/(1 + p|x|), odd in x
// (Abramowitz & Stegun 7.1.26: absolute error < 1.5e-7 in exact arithmetic; evaluated in float32
// up to ≈ 5e-7, ≈ 1e-5 relative near x = 0 where 1 − poly·t·e^{−x²} cancels, which is harmless
// inside Φ = ½(1 + erf). PyTorch vectorises erf the same way).
// erf_f32_given takes e^{−x²} from the caller, who may need it too (GELU's φ).
inline float erf_f32_given(float x, float exp_minus_x2) {
  const float a = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float poly = 1.061405429f;
  poly = poly * t - 1.453152027f;
  poly = poly * t + 1.421413741f;
  poly = poly * t - 0.284496736f;
  poly = poly * t + 0.254829592f;
  const float y = 1.0f - poly * t * exp_minus_x2;
  return std::copysign(y, x);
}
inline float erf_f32(float x) { return erf_f32_given(x, exp_f32(-x * x)); }

// tanh(x) ≈ x·P(x²)/Q(x²), an odd polynomial of degree 13 over an even one of degree 6, on
// |x| ≤ 7.9053 (beyond, tanh is ±1 in float32: x is clamped there); |x| < 0.0004 is x itself.
// The coefficients are Eigen's (generic_fast_tanh_float). Within 4e-7 absolute, 6 float32 units
// in the last place; NaN stays NaN.
inline float tanh_f32(float x) {
  constexpr float c = 7.90531110763549805f;
  const float v = x < -c ? -c : (x > c ? c : x);
  const float v2 = v * v;
  float p = -2.76076847742355e-16f;
  p = p * v2 + 2.00018790482477e-13f;
  p = p * v2 - 8.60467152213735e-11f;
  p = p * v2 + 5.12229709037114e-08f;
  p = p * v2 + 1.48572235717979e-05f;
  p = p * v2 + 6.37261928875436e-04f;
  p = p * v2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * v2 + 1.18534705686654e-04f;
  q = q * v2 + 2.26843463243900e-03f;
  q = q * v2 + 4.89352518554385e-03f;
  return std::fabs(v) < 0.0004f ? v : v * p / q;
}

template <class T> T erf_t(T x) {
  if constexpr (std::is_same_v<T, float>) return erf_f32(x);
  else return std::erf(x);
}
template <class T> T tanh_t(T x) {
  if constexpr (std::is_same_v<T, float>) return tanh_f32(x);
  else return std::tanh(x);
}
template <class T> T exp_t(T x) {
  if constexpr (std::is_same_v<T, float>) return exp_f32(x);
  else return std::exp(x);
}
template <class T> T exp_nonpositive_t(T x) {
  if constexpr (std::is_same_v<T, float>) return exp_f32_nonpositive(x);
  else return std::exp(x);
}

}  // namespace uwaga
