#include <catch2/catch.hpp>

#include <cmath>

#include "core/uwaga.h"
#include "nn/layer_norm.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("fused layer_norm passes gradcheck", "[nn][layer_norm]") {
  for (Shape shape : {Shape{5}, Shape{3, 4}, Shape{2, 3, 6}}) {
    INFO(shape_str(shape));
    std::int64_t d = shape.back();
    require_gradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2]); },
                      {leaf(shape, 1), leaf({d}, 2), leaf({d}, 3)});
  }
}

TEST_CASE("fused layer_norm equals the composed one, values and gradients", "[nn][layer_norm]") {
  // 4 rows of 7, and 150 rows of 96 (float64: blocks of 21 rows, so several and a partial one);
  // 30 rows of 40: dγ and dβ in two whole blocks of 16 features and a partial one.
  for (const Shape& shape : {Shape{4, 7}, Shape{150, 96}, Shape{30, 40}}) {
    const std::int64_t d = shape[1];
    INFO(shape_str(shape));
    Tensor x1 = leaf(shape, 1), w1 = leaf({d}, 2), b1 = leaf({d}, 3);
    Tensor x2 = leaf(shape, 1), w2 = leaf({d}, 2), b2 = leaf({d}, 3);
    Tensor up = leaf(shape, 4).detach();
    Tensor y1 = layer_norm(x1, w1, b1), y2 = layer_norm_composed(x2, w2, b2);
    REQUIRE(max_abs_diff(y1, y2) < 1e-12);
    y1.backward(up);
    y2.backward(up);
    REQUIRE(max_abs_diff(x1.grad(), x2.grad()) < 1e-12);
    REQUIRE(max_abs_diff(w1.grad(), w2.grad()) < 1e-12);
    REQUIRE(max_abs_diff(b1.grad(), b2.grad()) < 1e-12);
  }
  require_gradcheck(
      [](const std::vector<Tensor>& in) { return layer_norm_composed(in[0], in[1], in[2]); },
      {leaf({3, 5}, 5), leaf({5}, 6), leaf({5}, 7)});
}

TEST_CASE("layer_norm normalises each vector to mean 0 and variance 1", "[nn][layer_norm]") {
  Generator gen(3);
  Tensor x = Tensor::randn({6, 32}, gen, DType::Float64, 5.0, 3.0);
  Tensor y = layer_norm(x, Tensor::ones({32}, DType::Float64), Tensor::zeros({32}, DType::Float64));
  Tensor m = mean(y, {1}), v = var(y, {1}, false, 0);
  for (std::int64_t r = 0; r < 6; ++r) {
    REQUIRE(std::abs(m.at({r})) < 1e-12);
    REQUIRE(v.at({r}) == Approx(1.0).epsilon(1e-4));  // ε = 1e-5 shrinks it slightly
  }
}

TEST_CASE("LayerNorm matches PyTorch", "[nn][layer_norm][golden]") {
  LayerNorm ln(8);
  check_parity("layer_norm", ln, [&](auto& in) { return ln.forward(in.at("x")); });
}

TEST_CASE("layer_norm misuse gives clear errors", "[nn][layer_norm]") {
  REQUIRE_THROWS_WITH(layer_norm(Tensor::ones({2, 4}), Tensor::ones({3}), Tensor::zeros({3})),
                      Contains("layer_norm: input (2, 4) normalises 4 features but weight is (3,)"));
  REQUIRE_THROWS_WITH(LayerNorm(0), Contains("dim must be positive"));
  for (double eps : {0.0, -1e-5, std::nan("")}) {
    REQUIRE_THROWS_WITH(layer_norm(Tensor::ones({2, 4}), Tensor::ones({4}), Tensor::zeros({4}), eps),
                        Contains("layer_norm: eps must be a finite number > 0"));
    REQUIRE_THROWS_WITH(layer_norm_composed(Tensor::ones({2, 4}), Tensor::ones({4}),
                                            Tensor::zeros({4}), eps),
                        Contains("layer_norm: eps must be a finite number > 0"));
  }
}
