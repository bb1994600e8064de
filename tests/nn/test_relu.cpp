#include <catch2/catch.hpp>

#include <cmath>

#include "core/uwaga.h"
#include "nn/relu.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;

TEST_CASE("ReLU passes gradcheck on a feature map (B, C, H, W)", "[nn][relu]") {
  ReLU relu;
  Tensor x = leaf({2, 3, 5, 4}, 1);
  // The kink at 0 has no derivative: keep every value clear of the finite-difference step.
  for (std::int64_t i = 0; i < x.numel(); ++i)
    if (std::abs(x.flat(i)) < 1e-3) x.set_flat(i, 0.5);
  require_gradcheck([&](const std::vector<Tensor>& in) { return relu.forward(in[0]); }, {x});
  Tensor y = relu.forward(x);
  REQUIRE(y.shape() == x.shape());
  for (std::int64_t i = 0; i < x.numel(); ++i) REQUIRE(y.flat(i) == std::max(x.flat(i), 0.0));
}
