#include <catch2/catch.hpp>

#include <string>

#include "core/uwaga.h"
#include "nn/conv/conv2d.h"
#include "nn/conv/conv_transpose2d.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

struct TransposedCase {
  Shape x, weight;  // x (B, C_in, H, W), weight (C_in, C_out, kh, kw)
  std::int64_t stride, padding, output_padding;
  bool bias;
};

// The decoder's k4 s2 p1, odd sizes with H ≠ W, stride 1, output_padding, oblong and 1×1 kernels.
const TransposedCase kTransposedCases[] = {
    {{2, 3, 3, 4}, {3, 2, 4, 4}, 2, 1, 0, true},  {{1, 2, 3, 5}, {2, 3, 3, 3}, 1, 0, 0, true},
    {{2, 2, 3, 2}, {2, 2, 3, 3}, 2, 1, 1, false}, {{1, 3, 2, 3}, {3, 2, 2, 3}, 3, 0, 2, true},
    {{2, 3, 3, 5}, {3, 4, 1, 1}, 1, 0, 0, true},  {{1, 2, 5, 3}, {2, 2, 3, 2}, 2, 2, 0, true},
};

std::string describe(const TransposedCase& c) {
  return "x " + shape_str(c.x) + ", weight " + shape_str(c.weight) + ", stride " +
         std::to_string(c.stride) + ", padding " + std::to_string(c.padding) +
         ", output_padding " + std::to_string(c.output_padding) + (c.bias ? "" : ", no bias");
}

Tensor run(bool reference, const TransposedCase& c, const Tensor& x, const Tensor& w,
           const Tensor& b) {
  const Tensor bias = c.bias ? b : Tensor();
  return reference ? conv_transpose2d_reference(x, w, bias, c.stride, c.padding, c.output_padding)
                   : conv_transpose2d(x, w, bias, c.stride, c.padding, c.output_padding);
}

}  // namespace

TEST_CASE("conv_transpose2d and its reference pass gradcheck", "[nn][conv_transpose2d]") {
  for (bool reference : {false, true})
    for (const TransposedCase& c : kTransposedCases) {
      INFO(describe(c) << (reference ? ", reference" : ""));
      std::vector<Tensor> inputs = {leaf(c.x, 1), leaf(c.weight, 2)};
      if (c.bias) inputs.push_back(leaf({c.weight[1]}, 3));
      require_gradcheck(
          [&](const std::vector<Tensor>& in) {
            return run(reference, c, in[0], in[1], c.bias ? in[2] : Tensor());
          },
          inputs);
    }
}

TEST_CASE("conv_transpose2d equals the direct scatter, values and gradients",
          "[nn][conv_transpose2d]") {
  for (const TransposedCase& c : kTransposedCases) {
    INFO(describe(c));
    Tensor x1 = leaf(c.x, 4), w1 = leaf(c.weight, 5), b1 = leaf({c.weight[1]}, 6);
    Tensor x2 = leaf(c.x, 4), w2 = leaf(c.weight, 5), b2 = leaf({c.weight[1]}, 6);
    Tensor y1 = run(false, c, x1, w1, b1), y2 = run(true, c, x2, w2, b2);
    auto out_size = [&](std::int64_t in, std::int64_t k) {  // (in − 1)·s − 2p + k + output_padding
      return (in - 1) * c.stride - 2 * c.padding + k + c.output_padding;
    };
    REQUIRE(y1.shape() ==
            Shape{c.x[0], c.weight[1], out_size(c.x[2], c.weight[2]), out_size(c.x[3], c.weight[3])});
    REQUIRE(max_abs_diff(y1, y2) < 1e-12);
    Tensor up = leaf(y1.shape(), 7).detach();
    y1.backward(up);
    y2.backward(up);
    REQUIRE(max_abs_diff(x1.grad(), x2.grad()) < 1e-12);
    REQUIRE(max_abs_diff(w1.grad(), w2.grad()) < 1e-12);
    if (c.bias) REQUIRE(max_abs_diff(b1.grad(), b2.grad()) < 1e-12);
  }
}

TEST_CASE("conv_transpose2d is the adjoint of conv2d: <conv2d(z), x> = <z, convT(x)>",
          "[nn][conv_transpose2d]") {
  for (const TransposedCase& c : kTransposedCases) {
    INFO(describe(c));
    const Tensor x = leaf(c.x, 8).detach(), w = leaf(c.weight, 9).detach();
    const Tensor y = conv_transpose2d(x, w, Tensor(), c.stride, c.padding, c.output_padding);
    const Tensor z = leaf(y.shape(), 10).detach();  // a map of the transposed output's shape
    const Tensor cz = conv2d(z, w, Tensor(), c.stride, c.padding);
    REQUIRE(cz.shape() == x.shape());
    const double lhs = sum(cz * x).item(), rhs = sum(z * y).item();
    REQUIRE(lhs == Approx(rhs).epsilon(1e-12).margin(1e-12));
  }
}

TEST_CASE("kernel 4, stride 2, padding 1 doubles height and width", "[nn][conv_transpose2d]") {
  Generator gen(1);
  ConvTranspose2d up(8, 4, 4, {.stride = 2, .padding = 1}, gen);
  REQUIRE(up.weight.shape() == Shape{8, 4, 4, 4});
  REQUIRE(up.forward(Tensor::randn({2, 8, 6, 5}, gen)).shape() == Shape{2, 4, 12, 10});
  // PyTorch's init: fan_in from the weight's second dim, out_channels · k² = 64.
  for (double v : up.weight.to_vector()) REQUIRE(std::abs(v) <= 1.0 / 8.0);
  for (double v : up.bias.to_vector()) REQUIRE(std::abs(v) <= 1.0 / 8.0);
}

TEST_CASE("ConvTranspose2d matches PyTorch", "[nn][conv_transpose2d][golden]") {
  Generator gen(0);
  ConvTranspose2d up(3, 2, 4, {.stride = 2, .padding = 1}, gen);
  check_parity("conv_transpose2d", up, [&](auto& in) { return up.forward(in.at("x")); });
}

TEST_CASE("conv_transpose2d misuse gives clear errors naming the shapes",
          "[nn][conv_transpose2d]") {
  const Tensor x = Tensor::ones({2, 3, 4, 4});
  REQUIRE_THROWS_WITH(conv_transpose2d(x, Tensor::ones({5, 2, 4, 4}), Tensor(), 2, 1),
                      Contains("conv_transpose2d: input (2, 3, 4, 4) has 3 channels but weight "
                               "(5, 2, 4, 4) expects 5"));
  REQUIRE_THROWS_WITH(conv_transpose2d(x, Tensor::ones({3, 2, 4, 4}), Tensor::ones({3}), 2, 1),
                      Contains("conv_transpose2d: bias (3,) does not match weight (3, 2, 4, 4)"));
  REQUIRE_THROWS_WITH(conv_transpose2d(x, Tensor::ones({3, 2, 4, 4}), Tensor(), 2, 1, 2),
                      Contains("output_padding must be ≥ 0 and smaller than the stride 2, got 2"));
  REQUIRE_THROWS_WITH(conv_transpose2d(Tensor::ones({1, 3, 1, 1}), Tensor::ones({3, 2, 2, 2}),
                                       Tensor(), 1, 1),
                      Contains("gives an empty output 0×0"));
  REQUIRE_THROWS_WITH(conv_transpose2d(Tensor::ones({3, 4, 4}), Tensor::ones({3, 2, 4, 4}),
                                       Tensor(), 2, 1),
                      Contains("conv_transpose2d: input must be (B, C, H, W), got (3, 4, 4)"));
  Generator gen(0);
  REQUIRE_THROWS_WITH(ConvTranspose2d(3, 2, 4, {.stride = 2, .output_padding = 3}, gen),
                      Contains("ConvTranspose2dOptions: output_padding must be"));
}
