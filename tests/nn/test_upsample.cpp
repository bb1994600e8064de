#include <catch2/catch.hpp>

#include <string>

#include "core/uwaga.h"
#include "nn/conv/upsample.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("upsample_bilinear and the composed version pass gradcheck", "[nn][upsample]") {
  for (std::int64_t factor : {1, 2, 3, 4})
    for (Shape shape : {Shape{2, 3, 3, 5}, Shape{1, 2, 1, 4}}) {
      INFO("factor " << factor << ", x " << shape_str(shape));
      require_gradcheck(
          [&](const std::vector<Tensor>& in) { return upsample_bilinear(in[0], factor); },
          {leaf(shape, 1)});
      require_gradcheck(
          [&](const std::vector<Tensor>& in) { return upsample_bilinear_composed(in[0], factor); },
          {leaf(shape, 2)});
    }
}

TEST_CASE("upsample_bilinear equals A_H · X · A_Wᵀ, values and gradients", "[nn][upsample]") {
  for (std::int64_t factor : {1, 2, 3, 4}) {
    INFO("factor " << factor);
    Tensor x1 = leaf({2, 3, 5, 4}, 3), x2 = leaf({2, 3, 5, 4}, 3);
    Tensor y1 = upsample_bilinear(x1, factor), y2 = upsample_bilinear_composed(x2, factor);
    REQUIRE(y1.shape() == Shape{2, 3, 5 * factor, 4 * factor});
    REQUIRE(max_abs_diff(y1, y2) < 1e-12);
    Tensor up = leaf(y1.shape(), 4).detach();
    y1.backward(up);
    y2.backward(up);
    REQUIRE(max_abs_diff(x1.grad(), x2.grad()) < 1e-12);
  }
}

TEST_CASE("bilinear taps follow the half-pixel convention, clamped at the edges",
          "[nn][upsample]") {
  // Factor 2 on 3 pixels: src = (d + 0.5)/2 − 0.5 = −0.25, 0.25, 0.75, 1.25, 1.75, 2.25.
  const BilinearTaps t = bilinear_taps(3, 2);
  REQUIRE(t.i0 == std::vector<std::int64_t>{0, 0, 0, 1, 1, 2});
  REQUIRE(t.i1 == std::vector<std::int64_t>{1, 1, 1, 2, 2, 2});
  REQUIRE(t.w1 == std::vector<double>{0.0, 0.25, 0.75, 0.25, 0.75, 0.25});
  for (std::size_t d = 0; d < t.w0.size(); ++d) REQUIRE(t.w0[d] + t.w1[d] == 1.0);
  // The result: edges repeated, and a constant map stays constant.
  Tensor y = upsample_bilinear(Tensor::full({1, 1, 3, 3}, 2.5), 4);
  for (double v : y.to_vector()) REQUIRE(v == 2.5);
  // Factor 1 is the identity.
  Tensor x = leaf({1, 2, 3, 4}, 5).detach();
  REQUIRE(upsample_bilinear(x, 1).to_vector() == x.to_vector());
}

TEST_CASE("upsample_bilinear matches PyTorch's interpolate (align_corners=False)",
          "[nn][upsample][golden]") {
  Module none;  // no parameters: only the input and its gradient are compared
  for (std::int64_t factor : {2, 4})
    check_parity("upsample_bilinear_x" + std::to_string(factor), none,
                 [&](auto& in) { return upsample_bilinear(in.at("x"), factor); });
}

TEST_CASE("upsample_bilinear misuse gives clear errors", "[nn][upsample]") {
  for (std::int64_t factor : {0, -2})
    REQUIRE_THROWS_WITH(upsample_bilinear(Tensor::ones({1, 2, 3, 3}), factor),
                        Contains("upsample_bilinear: factor must be an integer ≥ 1, got " +
                                 std::to_string(factor) + " (input (1, 2, 3, 3))"));
  REQUIRE_THROWS_WITH(upsample_bilinear(Tensor::ones({2, 3, 3}), 2),
                      Contains("upsample_bilinear: input must be (B, C, H, W), got (2, 3, 3)"));
  REQUIRE_THROWS_WITH(upsample_bilinear_composed(Tensor::ones({1, 2, 3, 3}), 0),
                      Contains("factor must be an integer ≥ 1"));
}
