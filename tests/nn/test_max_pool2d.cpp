#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "core/uwaga.h"
#include "nn/conv/max_pool2d.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("max_pool2d passes gradcheck", "[nn][max_pool]") {
  for (auto [k, s, p] : {std::tuple{3, 2, 1}, {2, 2, 0}, {3, 1, 1}, {1, 1, 0}})
    for (Shape shape : {Shape{2, 3, 5, 6}, Shape{1, 2, 1, 3}}) {
      if (shape[2] + 2 * p < k) continue;
      INFO("kernel " << k << ", stride " << s << ", padding " << p << ", x " << shape_str(shape));
      require_gradcheck([&](const std::vector<Tensor>& in) { return max_pool2d(in[0], k, s, p); },
                        {leaf(shape, 7)});
    }
}

TEST_CASE("max_pool2d matches PyTorch's F.max_pool2d", "[nn][max_pool][golden]") {
  Module none;  // no parameters: only the input and its gradient are compared
  check_parity("max_pool2d_3x3_s2", none,
               [&](auto& in) { return max_pool2d(in.at("x"), 3, 2, 1); });
  check_parity("max_pool2d_2x2_s2", none,
               [&](auto& in) { return max_pool2d(in.at("x"), 2, 2, 0); });
}

TEST_CASE("max_pool2d by hand: padding is no value, ties go to the first, NaN wins",
          "[nn][max_pool]") {
  // A 4×4 map 0…15 in raster order, 3×3 windows at stride 2 with padding 1: output (i, j) sees
  // rows 2i−1…2i+1 and columns 2j−1…2j+1 of the map, the ones outside left out.
  Tensor x = Tensor::empty({1, 1, 4, 4});
  for (int i = 0; i < 16; ++i) x.set({0, 0, i / 4, i % 4}, i - 20);  // all negative: padding
                                                                    // must not read as 0
  x.requires_grad_();
  Tensor y = max_pool2d(x, 3, 2, 1);
  REQUIRE(y.shape() == Shape{1, 1, 2, 2});
  REQUIRE(y.to_vector() == std::vector<double>{5 - 20, 7 - 20, 13 - 20, 15 - 20});
  y.backward(Tensor::ones({1, 1, 2, 2}));
  std::vector<double> dx(16, 0.0);
  for (int i : {5, 7, 13, 15}) dx[i] = 1;
  REQUIRE(x.grad().to_vector() == dx);

  // Overlapping windows add up: a single largest value at the centre is every window's maximum.
  Tensor c = Tensor::zeros({1, 1, 3, 3});
  c.set({0, 0, 1, 1}, 9.0);
  c.requires_grad_();
  Tensor yc = max_pool2d(c, 2, 1, 0);  // four 2×2 windows, all holding the centre
  yc.backward(Tensor::full({1, 1, 2, 2}, 0.5));
  REQUIRE(c.grad().at({0, 0, 1, 1}) == 2.0);

  // Ties: the window's first maximum in raster order takes the gradient, as PyTorch's.
  Tensor t = Tensor::full({1, 1, 2, 2}, 3.0);
  t.requires_grad_();
  max_pool2d(t, 2, 2, 0).backward(Tensor::ones({1, 1, 1, 1}));
  REQUIRE(t.grad().to_vector() == std::vector<double>{1, 0, 0, 0});

  // NaN and infinities: a NaN anywhere in the window is the maximum, +∞ beats every number.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Tensor n = Tensor::from_vector({1.0, nan, 2.0, inf, -inf, 0.0, inf, 1e30}, {1, 2, 2, 2});
  Tensor yn = max_pool2d(n, 2, 2, 0);
  REQUIRE(std::isnan(yn.flat(0)));
  REQUIRE(yn.flat(1) == inf);

  // An empty batch gives an empty output.
  REQUIRE(max_pool2d(Tensor::ones({0, 2, 4, 4}), 3, 2, 1).shape() == Shape{0, 2, 2, 2});
}

TEST_CASE("max_pool2d picks what max_pool2d_reference picks, ties, NaNs and infinities included",
          "[nn][max_pool]") {
  // Values from a set of seven, so that most windows hold ties, many a NaN or an infinity; the
  // two kernels must agree on every output (NaN for NaN) and send each gradient to the same input.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> pool = {-inf, -1.0, 0.0, 1.0, 2.0, inf, nan};
  Generator gen(3);
  for (auto [k, s, p] : {std::tuple{3, 2, 1}, {2, 2, 0}, {3, 1, 1}, {1, 1, 0}, {4, 3, 2}, {5, 2, 2},
                         {3, 3, 0}, {2, 1, 1}})
    for (Shape shape :
         {Shape{2, 3, 9, 8}, Shape{1, 2, 5, 11}, Shape{1, 1, 4, 4}, Shape{3, 1, 7, 3}})
      for (DType dtype : {DType::Float32, DType::Float64}) {
        if (shape[2] + 2 * p < k || shape[3] + 2 * p < k) continue;
        INFO("kernel " << k << ", stride " << s << ", padding " << p << ", x " << shape_str(shape)
                       << (dtype == DType::Float32 ? ", float32" : ", float64"));
        std::vector<double> values(static_cast<std::size_t>(numel(shape)));
        for (double& v : values) v = pool[gen.below(pool.size())];
        Tensor x = Tensor::from_vector(values, shape, dtype).requires_grad_();
        Tensor r = Tensor::from_vector(values, shape, dtype).requires_grad_();
        Tensor y = max_pool2d(x, k, s, p), yr = max_pool2d_reference(r, k, s, p);
        REQUIRE(y.shape() == yr.shape());
        const std::vector<double> fast = y.to_vector(), slow = yr.to_vector();
        for (std::size_t i = 0; i < fast.size(); ++i) {
          INFO("output " << i);
          REQUIRE((fast[i] == slow[i] || (std::isnan(fast[i]) && std::isnan(slow[i]))));
        }
        Tensor dy = Tensor::randn(y.shape(), gen, dtype);
        y.backward(dy);
        yr.backward(dy);
        REQUIRE(x.grad().to_vector() == r.grad().to_vector());
      }
}

TEST_CASE("max_pool2d in float32 equals float64 rounded", "[nn][max_pool]") {
  Tensor x = leaf({3, 4, 9, 7}, 11).detach();
  Tensor y64 = max_pool2d(x, 3, 2, 1);
  Tensor y32 = max_pool2d(x.to(DType::Float32), 3, 2, 1);
  REQUIRE(y32.dtype() == DType::Float32);
  REQUIRE(max_abs_diff(y32.to(DType::Float64), y64) < 1e-6);
}

TEST_CASE("max_pool2d misuse gives clear errors", "[nn][max_pool]") {
  REQUIRE_THROWS_WITH(max_pool2d(Tensor::ones({2, 3, 3}), 2, 2, 0),
                      Contains("max_pool2d: input must be (B, C, H, W), got (2, 3, 3)"));
  REQUIRE_THROWS_WITH(max_pool2d(Tensor::ones({1, 1, 4, 4}), 2, 2, 2),
                      Contains("0 ≤ padding ≤ kernel/2"));
  REQUIRE_THROWS_WITH(max_pool2d(Tensor::ones({1, 1, 4, 4}), 0, 1, 0),
                      Contains("kernel ≥ 1"));
  REQUIRE_THROWS_WITH(max_pool2d(Tensor::ones({1, 1, 2, 2}), 5, 1, 1),
                      Contains("max_pool2d: input (1, 1, 2, 2) padded by 1 is smaller than the "
                               "kernel 5"));
}
