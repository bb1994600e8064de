#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "core/uwaga.h"
#include "nn/conv/conv2d.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

struct ConvCase {
  Shape x, weight;
  std::int64_t stride, padding;
  bool bias;
};

// Odd sizes, H ≠ W, square and oblong kernels, stride 1 and 2, padding 0 and 1, a 1×1 kernel.
const ConvCase kCases[] = {
    {{2, 3, 5, 4}, {2, 3, 3, 3}, 1, 0, true},  {{2, 3, 5, 4}, {2, 3, 3, 3}, 1, 1, true},
    {{2, 2, 7, 5}, {3, 2, 3, 3}, 2, 0, true},  {{2, 2, 7, 5}, {3, 2, 3, 3}, 2, 1, false},
    {{1, 2, 5, 6}, {3, 2, 2, 3}, 2, 1, true},  {{2, 3, 3, 5}, {4, 3, 1, 1}, 1, 0, true},
    {{2, 3, 4, 5}, {2, 3, 1, 1}, 2, 1, true},  {{1, 1, 2, 3}, {2, 1, 4, 4}, 1, 1, true},
};

std::string describe(const ConvCase& c) {
  return "x " + shape_str(c.x) + ", weight " + shape_str(c.weight) + ", stride " +
         std::to_string(c.stride) + ", padding " + std::to_string(c.padding) +
         (c.bias ? "" : ", no bias");
}

}  // namespace

TEST_CASE("conv2d passes gradcheck", "[nn][conv2d]") {
  for (const ConvCase& c : kCases) {
    INFO(describe(c));
    std::vector<Tensor> inputs = {leaf(c.x, 1), leaf(c.weight, 2)};
    if (c.bias) inputs.push_back(leaf({c.weight[0]}, 3));
    require_gradcheck(
        [&](const std::vector<Tensor>& in) {
          return conv2d(in[0], in[1], c.bias ? in[2] : Tensor(), c.stride, c.padding);
        },
        inputs);
  }
}

TEST_CASE("conv2d_reference passes gradcheck", "[nn][conv2d]") {
  for (const ConvCase& c : {kCases[1], kCases[3], kCases[4]}) {
    INFO(describe(c));
    std::vector<Tensor> inputs = {leaf(c.x, 4), leaf(c.weight, 5)};
    if (c.bias) inputs.push_back(leaf({c.weight[0]}, 6));
    require_gradcheck(
        [&](const std::vector<Tensor>& in) {
          return conv2d_reference(in[0], in[1], c.bias ? in[2] : Tensor(), c.stride, c.padding);
        },
        inputs);
  }
}

TEST_CASE("im2col + GEMM conv2d equals the direct loops, values and gradients",
          "[nn][conv2d]") {
  for (const ConvCase& c : kCases) {
    INFO(describe(c));
    Tensor x1 = leaf(c.x, 7), w1 = leaf(c.weight, 8), b1 = leaf({c.weight[0]}, 9);
    Tensor x2 = leaf(c.x, 7), w2 = leaf(c.weight, 8), b2 = leaf({c.weight[0]}, 9);
    Tensor y1 = conv2d(x1, w1, c.bias ? b1 : Tensor(), c.stride, c.padding);
    Tensor y2 = conv2d_reference(x2, w2, c.bias ? b2 : Tensor(), c.stride, c.padding);
    REQUIRE(max_abs_diff(y1, y2) < 1e-12);
    Tensor up = leaf(y1.shape(), 10).detach();
    y1.backward(up);
    y2.backward(up);
    REQUIRE(max_abs_diff(x1.grad(), x2.grad()) < 1e-12);
    REQUIRE(max_abs_diff(w1.grad(), w2.grad()) < 1e-12);
    if (c.bias) REQUIRE(max_abs_diff(b1.grad(), b2.grad()) < 1e-12);
  }
}

TEST_CASE("conv2d in float32 on one and two threads equals the direct loops", "[nn][conv2d]") {
  // Large enough that a batch runs in parallel (one image per thread), and that a single image
  // splits im2col over channels and the GEMM over output channels. Each thread count repeats
  // bit for bit.
  struct Big {
    Shape x, weight;
    std::int64_t stride, padding;
  };
  for (const Big& c : {Big{{4, 16, 25, 21}, {24, 16, 3, 3}, 2, 1},
                       Big{{1, 32, 40, 40}, {32, 32, 3, 3}, 1, 1}}) {
    INFO("x " << shape_str(c.x) << ", weight " << shape_str(c.weight));
    Generator gen(11);
    const Tensor x = Tensor::randn(c.x, gen);
    const Tensor w = Tensor::randn(c.weight, gen, DType::Float32, 0, 0.1);
    const Tensor b = Tensor::randn({c.weight[0]}, gen);
    Tensor up;
    // y, dx, dW, dbias of conv2d (or the reference) on copies of x, w, b.
    auto run = [&](bool reference) {
      Tensor xs = x.clone().requires_grad_(), ws = w.clone().requires_grad_();
      Tensor bs = b.clone().requires_grad_();
      Tensor y = reference ? conv2d_reference(xs, ws, bs, c.stride, c.padding)
                           : conv2d(xs, ws, bs, c.stride, c.padding);
      if (!up.defined()) up = Tensor::randn(y.shape(), gen);
      y.backward(up);
      return std::vector<Tensor>{y.detach(), xs.grad(), ws.grad(), bs.grad()};
    };
    const int before = num_threads();
    for (int threads : {1, 2}) {
      INFO(threads << " threads");
      set_num_threads(threads);
      const std::vector<Tensor> fast = run(false), again = run(false), slow = run(true);
      const char* names[] = {"y", "dx", "dW", "dbias"};
      for (int i = 0; i < 4; ++i) {
        CHECK(fast[i].to_vector() == again[i].to_vector());
        check_close(std::string("conv2d ") + names[i], fast[i], slow[i], i < 2 ? 1e-4 : 1e-3,
                    1e-4);
      }
    }
    set_num_threads(before);
  }
}

TEST_CASE("Conv2d matches PyTorch", "[nn][conv2d][golden]") {
  Generator gen(0);
  Conv2d conv(3, 4, 3, {.stride = 2, .padding = 1}, gen);
  check_parity("conv2d", conv, [&](auto& in) { return conv.forward(in.at("x")); });
  Conv2d pointwise(4, 5, 1, {}, gen);
  check_parity("conv2d_pointwise", pointwise,
               [&](auto& in) { return pointwise.forward(in.at("x")); });
}

TEST_CASE("Conv2d starts as PyTorch's: U(±1/√fan_in) for weight and bias", "[nn][conv2d]") {
  Generator gen(3);
  Conv2d conv(4, 8, 3, {}, gen);
  const double bound = 1.0 / std::sqrt(4.0 * 3 * 3);
  REQUIRE(conv.weight.shape() == Shape{8, 4, 3, 3});
  REQUIRE(conv.bias.shape() == Shape{8});
  double largest = 0;
  for (double v : conv.weight.to_vector()) {
    REQUIRE(std::abs(v) <= bound);
    largest = std::max(largest, std::abs(v));
  }
  REQUIRE(largest > 0.9 * bound);  // 288 draws spread over the whole interval
  for (double v : conv.bias.to_vector()) REQUIRE(std::abs(v) <= bound);
  std::vector<std::string> names;
  for (auto& [name, p] : conv.named_parameters()) names.push_back(name);
  REQUIRE(names == std::vector<std::string>{"weight", "bias"});
  Conv2d no_bias(4, 8, 3, {.bias = false}, gen);
  REQUIRE(no_bias.parameters().size() == 1);
  REQUIRE(no_bias.forward(Tensor::ones({1, 4, 5, 5})).shape() == Shape{1, 8, 3, 3});
}

TEST_CASE("conv2d misuse gives clear errors naming the shapes", "[nn][conv2d]") {
  const Tensor x = Tensor::ones({2, 3, 4, 4});
  REQUIRE_THROWS_WITH(conv2d(x, Tensor::ones({4, 5, 3, 3}), Tensor(), 1, 0),
                      Contains("conv2d: input (2, 3, 4, 4) has 3 channels but weight (4, 5, 3, 3) "
                               "expects 5"));
  REQUIRE_THROWS_WITH(conv2d(x, Tensor::ones({4, 3, 7, 7}), Tensor(), 1, 1),
                      Contains("conv2d: kernel 7×7 (weight (4, 3, 7, 7)) is larger than the "
                               "padded input 6×6 (input (2, 3, 4, 4), padding 1)"));
  REQUIRE_THROWS_WITH(conv2d(x, Tensor::ones({4, 3, 3, 3}), Tensor::ones({3}), 1, 0),
                      Contains("conv2d: bias (3,) does not match weight (4, 3, 3, 3)"));
  REQUIRE_THROWS_WITH(conv2d(Tensor::ones({3, 4, 4}), Tensor::ones({4, 3, 3, 3}), Tensor(), 1, 0),
                      Contains("conv2d: input must be (B, C, H, W), got (3, 4, 4)"));
  REQUIRE_THROWS_WITH(conv2d(x, Tensor::ones({4, 3, 3, 3}), Tensor(), 0, 0),
                      Contains("conv2d: stride must be ≥ 1, got 0"));
  REQUIRE_THROWS_WITH(conv2d(x, Tensor::ones({4, 3, 3, 3}), Tensor(), 1, -1),
                      Contains("conv2d: padding must be ≥ 0, got -1"));
  REQUIRE_THROWS_WITH(conv2d(x, Tensor::ones({4, 3, 3, 3}, DType::Float64), Tensor(), 1, 0),
                      Contains("conv2d"));
  Generator gen(0);
  REQUIRE_THROWS_WITH(Conv2d(3, 4, 3, {.stride = 0}, gen), Contains("stride must be ≥ 1"));
  REQUIRE_THROWS_WITH(Conv2d(0, 4, 3, {}, gen), Contains("in_channels must be positive"));
}
