#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/fast_math.h"

using namespace uwaga;

TEST_CASE("float32 exp and erf stay within a few float32 roundings of float64", "[core][fast_math]") {
  double worst_exp = 0, worst_erf = 0;
  for (int i = 0; i <= 200000; ++i) {
    const float x = static_cast<float>(-87.0 + 175.0 * i / 200000);  // e^x a normal float
    const double want = std::exp(static_cast<double>(x));
    worst_exp = std::max(worst_exp, std::abs(exp_f32(x) - want) / want);
    const float u = static_cast<float>(-6.0 + 12.0 * i / 200000);
    worst_erf = std::max(worst_erf, std::abs(erf_f32(u) - std::erf(static_cast<double>(u))));
  }
  INFO("relative error of exp " << worst_exp << ", absolute error of erf " << worst_erf);
  REQUIRE(worst_exp < 4e-7);  // float32's rounding is 6e-8 relative
  REQUIRE(worst_erf < 6e-7);  // A&S 7.1.26: 1.5e-7, evaluated in float32: 4.7e-7 measured
  // Far below the range exp is clamped to e^-87 (no denormals, no NaN); the tails of erf are ±1.
  REQUIRE(exp_f32(-1000.0f) > 0);
  REQUIRE(exp_f32(-1000.0f) < 2e-38f);
  REQUIRE(std::isfinite(exp_f32(1000.0f)));
  REQUIRE(erf_f32(-20.0f) == -1.0f);
  REQUIRE(erf_f32(20.0f) == 1.0f);
  // float64 goes through the standard library.
  REQUIRE(exp_t(0.5) == std::exp(0.5));
  REQUIRE(erf_t(0.5) == std::erf(0.5));
}

TEST_CASE("exp for arguments at most 0 is exp_f32 there, bit for bit", "[core][fast_math]") {
  // The softmax's exponential (e − max(e) ≤ 0) drops exp_f32's upper clamp only.
  for (int i = 0; i <= 100000; ++i) {
    const float x = static_cast<float>(-100.0 * i / 100000);
    REQUIRE(exp_f32_nonpositive(x) == exp_f32(x));
  }
  const float inf = std::numeric_limits<float>::infinity();
  REQUIRE(exp_f32_nonpositive(-inf) == exp_f32(-inf));  // a masked key: e^-87
  REQUIRE(std::isnan(exp_f32_nonpositive(std::nanf(""))));
  REQUIRE(exp_nonpositive_t(-0.5) == std::exp(-0.5));
}

TEST_CASE("float32 tanh is within 4e-7 of float64's over every float32, odd, and keeps NaN",
          "[core][fast_math]") {
  double worst = 0, worst_at = 0;
  for (std::uint32_t bits = 0; bits < 0x7f800000u; bits += 61) {  // every 61st finite float ≥ 0
    float x;
    std::memcpy(&x, &bits, sizeof x);
    for (const float s : {x, -x}) {
      const double e = std::abs(tanh_f32(s) - std::tanh(static_cast<double>(s)));
      if (e > worst) worst = e, worst_at = s;
    }
    REQUIRE(tanh_f32(-x) == -tanh_f32(x));
  }
  INFO("absolute error " << worst << " at " << worst_at);
  REQUIRE(worst < 4e-7);  // 3.5e-7 measured, near ±5.8 where tanh is 1 − 2e-5
  const float inf = std::numeric_limits<float>::infinity();
  REQUIRE(tanh_f32(inf) == 1.0f);
  REQUIRE(tanh_f32(-inf) == -1.0f);
  REQUIRE(tanh_f32(1e-30f) == 1e-30f);  // tiny values are themselves
  REQUIRE(std::isnan(tanh_f32(std::numeric_limits<float>::quiet_NaN())));
  REQUIRE(tanh_t(0.5) == std::tanh(0.5));
}
