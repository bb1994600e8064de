#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/uwaga.h"
#include "nn/gelu.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("gelu and its derivative at known points", "[nn][gelu]") {
  // Expected values from PyTorch 1.13 (exact erf form, float64):
  //   v = torch.tensor([-3, -1, -0.5, 0, 0.5, 1, 3], dtype=torch.float64, requires_grad=True)
  //   F.gelu(v);  F.gelu(v).sum().backward(); v.grad
  const std::vector<double> xs = {-3, -1, -0.5, 0, 0.5, 1, 3};
  const std::vector<double> y = {-0.00404969409489031, -0.15865525393145702, -0.15426876936299344,
                                 0.0, 0.34573123063700656, 0.841344746068543, 2.99595030590511};
  const std::vector<double> dy = {-0.01194564720418392, -0.08331547058768635, 0.13250487534383712,
                                  0.5, 0.8674951246561629, 1.0833154705876864, 1.011945647204184};
  Tensor x = Tensor::from_vector(xs, {7}, DType::Float64).requires_grad_();
  Tensor out = gelu(x);
  for (int i = 0; i < 7; ++i) REQUIRE(out.flat(i) == Approx(y[i]).epsilon(1e-14).margin(1e-16));
  sum(out).backward();
  for (int i = 0; i < 7; ++i) REQUIRE(x.grad().flat(i) == Approx(dy[i]).epsilon(1e-13));
}

TEST_CASE("gelu passes gradcheck, fused and composed", "[nn][gelu]") {
  Tensor x = leaf({3, 5}, 2);
  require_gradcheck([](const std::vector<Tensor>& in) { return gelu(in[0]); }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) { return gelu_composed(in[0]); }, {x});
  // The input used twice, and on a transposed view.
  require_gradcheck([](const std::vector<Tensor>& in) { return gelu(in[0]) * in[0]; }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) { return gelu(transpose(in[0], 0, 1)); },
                    {x});
}

TEST_CASE("fused gelu equals the composed form", "[nn][gelu]") {
  Generator gen(3);
  Tensor x0 = Tensor::randn({4, 6}, gen, DType::Float64, 0.0, 2.0);
  Tensor v = Tensor::randn({4, 6}, gen, DType::Float64);
  Tensor a = x0.clone().requires_grad_(), b = x0.clone().requires_grad_();
  Tensor ya = gelu(a), yb = gelu_composed(b);
  REQUIRE(max_abs_diff(ya, yb) < 1e-15);
  ya.backward(v);
  yb.backward(v);
  REQUIRE(max_abs_diff(a.grad(), b.grad()) < 1e-14);
  REQUIRE(std::string(ya.grad_fn()->op) == "gelu");
  // float32 agrees with float64 to float32 precision.
  REQUIRE(max_abs_diff(gelu(x0.to(DType::Float32)), gelu(x0)) < 1e-6);
}

TEST_CASE("the GELU module is the fused gelu", "[nn][gelu]") {
  Tensor x = leaf({2, 3}, 4);
  Tensor y = GELU().forward(x);
  REQUIRE(std::string(y.grad_fn()->op) == "gelu");
  REQUIRE(y.to_vector() == gelu(x).to_vector());
}

TEST_CASE("gelu rejects int64 tensors", "[nn][gelu]") {
  Tensor ids = Tensor::from_indices({1}, {1});
  REQUIRE_THROWS_WITH(gelu(ids), Contains("gelu: expects a float32 or float64 tensor, got int64"));
  REQUIRE_THROWS_WITH(gelu_composed(ids), Contains("gelu_composed: expects a float32"));
}

TEST_CASE("float32 gelu (vectorised erf) agrees with the float64 one", "[nn][gelu]") {
  // Inputs across the whole useful range, including the tails where erf saturates.
  const std::int64_t n = 40001;
  Tensor x64 = Tensor::empty({n}, DType::Float64);
  for (std::int64_t i = 0; i < n; ++i) x64.set({i}, -10.0 + 20.0 * i / (n - 1));
  Tensor x32 = x64.to(DType::Float32).requires_grad_();
  Tensor x64g = x64.clone().requires_grad_();
  Tensor y32 = gelu(x32), y64 = gelu(x64g);
  Tensor ones32 = Tensor::ones({n}), ones64 = Tensor::ones({n}, DType::Float64);
  y32.backward(ones32);
  y64.backward(ones64);
  double worst_y = 0, worst_d = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double scale = std::max(1.0, std::abs(x64.flat(i)));
    worst_y = std::max(worst_y, std::abs(y32.flat(i) - y64.flat(i)) / scale);
    worst_d = std::max(worst_d, std::abs(x32.grad().flat(i) - x64g.grad().flat(i)));
  }
  INFO("largest error: gelu " << worst_y << " (relative to max(1, |x|)), gelu' " << worst_d);
  REQUIRE(worst_y < 1e-6);
  REQUIRE(worst_d < 1e-6);
  REQUIRE(gelu(Tensor::from_vector({-200, 200}, {2})).to_vector() == std::vector<double>{0, 200});
}

TEST_CASE("gelu and its derivative at large magnitudes take their limits", "[nn][gelu]") {
  // gelu(x) → x and gelu'(x) → 1 as x → +∞; gelu(x) → 0 and gelu'(x) → 0 as x → −∞. The kernel
  // takes the limits beyond |x| = 13 (float32) or 40 (float64); without that, float32 gave
  // gelu'(±1e38) = 1.66 / −0.66 (exp_f32 stops at e^−87) and both dtypes gave gelu(−∞) = NaN
  // and gelu'(±∞) = ∞ or NaN.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> xs = {10, -10, 1e4, -1e4, 1e38, -1e38, inf, -inf};
  for (DType dtype : {DType::Float32, DType::Float64}) {
    INFO(dtype_name(dtype));
    Tensor x = Tensor::from_vector(xs, {8}, dtype).requires_grad_();
    Tensor y = gelu(x);
    sum(y).backward();
    for (std::int64_t i = 0; i < 8; ++i) {
      const double v = x.flat(i), g = x.grad().flat(i);
      INFO("x = " << v << ": gelu " << y.flat(i) << ", gelu' " << g);
      if (v > 0) {
        REQUIRE(y.flat(i) == v);  // x Φ(x) with Φ(x) = 1 to rounding from x ≈ 6 on
        REQUIRE(g == 1.0);
      } else {
        REQUIRE(y.flat(i) == Approx(0.0).margin(1e-21));  // −7.6e-23 at −10
        REQUIRE(g == Approx(0.0).margin(1e-20));          // −7.6e-22 at −10
      }
      if (std::abs(v) > 40) REQUIRE(g == (v > 0 ? 1.0 : 0.0));  // exactly the limit
    }
    Tensor nan = gelu(Tensor::from_vector({std::nan("")}, {1}, dtype));
    REQUIRE(std::isnan(nan.item()));  // NaN is not clamped into a number
  }
}

TEST_CASE("gelu matches x Phi(x) from erfc across the clamp, in float32 and float64",
          "[nn][gelu]") {
  // A sweep over [−60, 60] crosses both dtypes' limits X = 13 and 40: no step there.
  const std::int64_t n = 12001;
  std::vector<double> xs(n);
  for (std::int64_t i = 0; i < n; ++i) xs[i] = -60.0 + 120.0 * i / (n - 1);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    INFO(dtype_name(dtype));
    Tensor x = Tensor::from_vector(xs, {n}, dtype).requires_grad_();
    Tensor y = gelu(x);
    sum(y).backward();
    const double tol = dtype == DType::Float32 ? 1e-6 : 1e-14;
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = x.flat(i);
      const double cdf = 0.5 * std::erfc(-v / std::sqrt(2.0));
      const double pdf = std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI);
      INFO("x = " << v);
      REQUIRE(std::abs(y.flat(i) - v * cdf) <= tol * std::max(1.0, std::abs(v)));
      REQUIRE(std::abs(x.grad().flat(i) - (cdf + v * pdf)) <= tol);
    }
  }
}

TEST_CASE("gelu_tanh (GPT-2's GELU) and its derivative at known points", "[nn][gelu]") {
  // From PyTorch 1.13, float64:
  //   v = torch.tensor([-3, -1, -0.5, 0, 0.5, 1, 3], dtype=torch.float64, requires_grad=True)
  //   F.gelu(v, approximate="tanh");  .sum().backward(); v.grad
  const std::vector<double> xs = {-3, -1, -0.5, 0, 0.5, 1, 3};
  const std::vector<double> y = {-0.0036373920817729943, -0.15880800939172324,
                                 -0.15428599017485606,   0.0,
                                 0.34571400982514394,    0.8411919906082768,
                                 2.996362607918227};
  const std::vector<double> dy = {-0.011584166630969648, -0.08296408384578252,
                                  0.13263009646535764,   0.5,
                                  0.8673699035346424,    1.0829640838457826,
                                  1.0115841666309695};
  Tensor x = Tensor::from_vector(xs, {7}, DType::Float64).requires_grad_();
  Tensor out = gelu_tanh(x);
  for (int i = 0; i < 7; ++i) REQUIRE(out.flat(i) == Approx(y[i]).epsilon(1e-14).margin(1e-16));
  sum(out).backward();
  for (int i = 0; i < 7; ++i) REQUIRE(x.grad().flat(i) == Approx(dy[i]).epsilon(1e-13));
}

TEST_CASE("gelu_tanh passes gradcheck, equals its composed form, and has its limits",
          "[nn][gelu]") {
  Tensor x = leaf({3, 5}, 2);
  require_gradcheck([](const std::vector<Tensor>& in) { return gelu_tanh(in[0]); }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) { return gelu_tanh_composed(in[0]); }, {x});
  Generator gen(5);
  Tensor x0 = Tensor::randn({4, 6}, gen, DType::Float64, 0.0, 3.0);
  Tensor v = Tensor::randn({4, 6}, gen, DType::Float64);
  Tensor a = x0.clone().requires_grad_(), b = x0.clone().requires_grad_();
  Tensor ya = gelu_tanh(a), yb = gelu_tanh_composed(b);
  REQUIRE(max_abs_diff(ya, yb) < 1e-14);
  ya.backward(v);
  yb.backward(v);
  REQUIRE(max_abs_diff(a.grad(), b.grad()) < 1e-13);
  REQUIRE(std::string(ya.grad_fn()->op) == "gelu_tanh");
  REQUIRE(max_abs_diff(gelu_tanh(x0.to(DType::Float32)), gelu_tanh(x0)) < 1e-6);
  // Close to the erf form, but not equal: loading GPT-2 needs the right one.
  const double gap = max_abs_diff(gelu_tanh(x0), gelu(x0));
  REQUIRE(gap > 1e-6);
  REQUIRE(gap < 1e-3);
  // The tails and infinities, in both precisions.
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor t = Tensor::from_vector({-inf, -1e30, -25.0, 25.0, 1e30, inf}, {6}, dt).requires_grad_();
    Tensor yt = gelu_tanh(t);
    sum(yt).backward();
    const std::vector<double> want = {0, 0, 0, 25, 1e30, inf}, dwant = {0, 0, 0, 1, 1, 1};
    for (int i = 0; i < 6; ++i) {
      CHECK(yt.flat(i) == Approx(want[i]));
      CHECK(t.grad().flat(i) == dwant[i]);
    }
  }
  // The module picks the form.
  Tensor m = leaf({2, 3}, 4);
  REQUIRE(std::string(GELU(GeluApproximation::tanh).forward(m).grad_fn()->op) == "gelu_tanh");
  REQUIRE(std::string(GELU().forward(m).grad_fn()->op) == "gelu");
}
