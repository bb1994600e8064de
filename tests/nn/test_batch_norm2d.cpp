#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "core/uwaga.h"
#include "nn/conv/batch_norm2d.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {
// Running statistics a formula that ignored them could not match: mean ≠ 0, variance ≠ 1.
Tensor running_mean_of(std::int64_t C) { return leaf({C}, 20).detach() * 0.3; }
Tensor running_var_of(std::int64_t C) { return positive_leaf({C}, 21, 0.5, 1.5).detach(); }
}  // namespace

TEST_CASE("batch_norm2d passes gradcheck in training and eval mode", "[nn][batch_norm2d]") {
  for (Shape shape : {Shape{2, 3, 3, 5}, Shape{3, 2, 1, 1}, Shape{1, 2, 4, 3}})
    for (bool training : {true, false}) {
      INFO(shape_str(shape) << (training ? ", training" : ", eval"));
      const std::int64_t C = shape[1];
      const Tensor rm = running_mean_of(C), rv = running_var_of(C);
      require_gradcheck(
          [&](const std::vector<Tensor>& in) {
            // Training mode leaves the running statistics alone here (undefined).
            return training ? batch_norm2d(in[0], in[1], in[2], Tensor(), Tensor(), true)
                            : batch_norm2d(in[0], in[1], in[2], rm, rv, false);
          },
          {leaf(shape, 1), leaf({C}, 2), leaf({C}, 3)});
    }
}

TEST_CASE("fused batch_norm2d equals the composed one, values and gradients",
          "[nn][batch_norm2d]") {
  Tensor x1 = leaf({3, 4, 5, 3}, 1), w1 = leaf({4}, 2), b1 = leaf({4}, 3);
  Tensor x2 = leaf({3, 4, 5, 3}, 1), w2 = leaf({4}, 2), b2 = leaf({4}, 3);
  Tensor up = leaf({3, 4, 5, 3}, 4).detach();
  Tensor y1 = batch_norm2d(x1, w1, b1, Tensor(), Tensor(), true);
  Tensor y2 = batch_norm2d_composed(x2, w2, b2);
  REQUIRE(max_abs_diff(y1, y2) < 1e-12);
  y1.backward(up);
  y2.backward(up);
  REQUIRE(max_abs_diff(x1.grad(), x2.grad()) < 1e-12);
  REQUIRE(max_abs_diff(w1.grad(), w2.grad()) < 1e-12);
  REQUIRE(max_abs_diff(b1.grad(), b2.grad()) < 1e-12);
  require_gradcheck(
      [](const std::vector<Tensor>& in) { return batch_norm2d_composed(in[0], in[1], in[2]); },
      {leaf({2, 3, 2, 3}, 5), leaf({3}, 6), leaf({3}, 7)});
}

TEST_CASE("training mode normalises each channel over batch and positions; eval uses the "
          "running statistics",
          "[nn][batch_norm2d]") {
  Generator gen(3);
  Tensor x = Tensor::randn({4, 3, 5, 6}, gen, DType::Float64, 2.0, 3.0);
  const Tensor ones = Tensor::ones({3}, DType::Float64), zeros = Tensor::zeros({3}, DType::Float64);
  Tensor y = batch_norm2d(x, ones, zeros, Tensor(), Tensor(), true);
  Tensor m = mean(y, {0, 2, 3}), v = var(y, {0, 2, 3}, false, 0);
  for (std::int64_t c = 0; c < 3; ++c) {
    REQUIRE(std::abs(m.at({c})) < 1e-12);
    REQUIRE(v.at({c}) == Approx(1.0).epsilon(1e-4));  // ε = 1e-5 shrinks it slightly
  }
  // Eval: (x − running_mean)/√(running_var + ε)·γ + β, channel by channel, from primitives.
  const Tensor rm = running_mean_of(3), rv = running_var_of(3);
  const Tensor w = leaf({3}, 8).detach(), b = leaf({3}, 9).detach();
  Tensor eval = batch_norm2d(x, w, b, rm, rv, false);
  auto per_channel = [](const Tensor& t) { return reshape(t, {1, 3, 1, 1}); };
  Tensor expected =
      (x - per_channel(rm)) / sqrt(per_channel(rv) + 1e-5) * per_channel(w) + per_channel(b);
  REQUIRE(max_abs_diff(eval, expected) < 1e-12);
}

TEST_CASE("BatchNorm2d updates its running statistics in training mode only",
          "[nn][batch_norm2d]") {
  BatchNorm2d bn(3, {.momentum = 0.25});
  bn.to(DType::Float64);
  Generator gen(4);
  Tensor x = Tensor::randn({2, 3, 4, 5}, gen, DType::Float64, 1.0, 2.0);
  Tensor batch_mean = mean(x, {0, 2, 3});
  Tensor batch_var = var(x, {0, 2, 3}, false, 1);  // unbiased: n − 1 = 39
  bn.forward(x);
  for (std::int64_t c = 0; c < 3; ++c) {
    REQUIRE(bn.running_mean.at({c}) == Approx(0.25 * batch_mean.at({c})).epsilon(1e-12));
    REQUIRE(bn.running_var.at({c}) == Approx(0.75 + 0.25 * batch_var.at({c})).epsilon(1e-12));
  }
  REQUIRE(bn.num_batches_tracked.item() == 1);
  bn.forward(x);
  REQUIRE(bn.num_batches_tracked.item() == 2);
  REQUIRE(bn.running_mean.at({0}) ==
          Approx(0.75 * 0.25 * batch_mean.at({0}) + 0.25 * batch_mean.at({0})).epsilon(1e-12));

  bn.eval();
  const std::vector<double> mean_before = bn.running_mean.to_vector();
  Tensor y = bn.forward(x);
  REQUIRE(bn.running_mean.to_vector() == mean_before);
  REQUIRE(bn.num_batches_tracked.item() == 2);
  // Eval output is an affine map of x per channel, unlike training mode's.
  bn.train();
  REQUIRE(max_abs_diff(y, bn.forward(x)) > 1e-3);
}

TEST_CASE("BatchNorm2d has PyTorch's parameters and buffers", "[nn][batch_norm2d]") {
  BatchNorm2d bn(4);
  std::vector<std::string> params, buffers;
  for (auto& [name, p] : bn.named_parameters()) params.push_back(name);
  for (auto& [name, b] : bn.named_buffers()) buffers.push_back(name);
  REQUIRE(params == std::vector<std::string>{"weight", "bias"});
  REQUIRE(buffers ==
          std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  REQUIRE(bn.num_batches_tracked.dtype() == DType::Int64);
  REQUIRE(bn.num_batches_tracked.shape().empty());
  REQUIRE_FALSE(bn.running_mean.requires_grad());
  for (double v : bn.running_var.to_vector()) REQUIRE(v == 1.0);
  bn.to(DType::Float64);  // the statistics follow, the count stays an integer
  REQUIRE(bn.running_var.dtype() == DType::Float64);
  REQUIRE(bn.num_batches_tracked.dtype() == DType::Int64);
}

TEST_CASE("BatchNorm2d matches PyTorch in training and eval mode", "[nn][batch_norm2d][golden]") {
  // Forward, gradients, and the buffers after the forward pass (running statistics, count).
  BatchNorm2d train_bn(3);
  train_bn.train();
  check_parity("batch_norm2d_train", train_bn,
               [&](auto& in) { return train_bn.forward(in.at("x")); });
  REQUIRE(train_bn.num_batches_tracked.item() == 8);  // 7 in the file, plus this pass
  BatchNorm2d eval_bn(3);
  eval_bn.eval();
  check_parity("batch_norm2d_eval", eval_bn,
               [&](auto& in) { return eval_bn.forward(in.at("x")); });
}

TEST_CASE("batch_norm2d misuse gives clear errors", "[nn][batch_norm2d]") {
  const Tensor x = Tensor::ones({2, 3, 4, 4}), four = Tensor::ones({4}), three = Tensor::ones({3});
  REQUIRE_THROWS_WITH(batch_norm2d(x, four, four, Tensor(), Tensor(), true),
                      Contains("batch_norm2d: input (2, 3, 4, 4) has 3 channels but weight is "
                               "(4,) and bias (4,)"));
  REQUIRE_THROWS_WITH(batch_norm2d(x, three, three, four, four, false),
                      Contains("has 3 channels but running_mean is (4,) and running_var (4,)"));
  const Tensor one_pixel = Tensor::ones({1, 3, 1, 1});
  REQUIRE_THROWS_WITH(batch_norm2d(one_pixel, three, three, Tensor(), Tensor(), true),
                      Contains("training needs more than one value per channel to estimate its "
                               "variance, got input (1, 3, 1, 1)"));
  REQUIRE_THROWS_WITH(batch_norm2d(x, three, three, Tensor(), Tensor(), false),
                      Contains("eval mode normalises with the running statistics, but none "
                               "were given"));
  REQUIRE_THROWS_WITH(batch_norm2d(Tensor::ones({2, 3, 4}), three, three, Tensor(), Tensor(), true),
                      Contains("batch_norm2d: input must be (B, C, H, W), got (2, 3, 4)"));
  REQUIRE_THROWS_WITH(batch_norm2d(x, three, three, Tensor(), Tensor(), true, 0.1, 0.0),
                      Contains("eps must be a finite number > 0"));
  REQUIRE_THROWS_WITH(BatchNorm2d(3, {.momentum = 1.5}), Contains("momentum must be in [0, 1]"));
  REQUIRE_THROWS_WITH(BatchNorm2d(0), Contains("BatchNorm2d: channels must be positive"));
  BatchNorm2d bn(4);
  REQUIRE_THROWS_WITH(bn.forward(x), Contains("has 3 channels but weight is (4,)"));
}
