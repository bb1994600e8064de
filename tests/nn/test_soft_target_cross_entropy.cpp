#include <catch2/catch.hpp>

#include <cmath>

#include "core/uwaga.h"
#include "nn/cross_entropy.h"
#include "nn/soft_target_cross_entropy.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

// Rows of random probabilities (positive, summing to 1), float64.
Tensor probabilities(std::int64_t N, std::int64_t C, std::uint64_t seed) {
  Generator gen(seed);
  Tensor t = Tensor::uniform({N, C}, gen, 0.1, 1.0, DType::Float64);
  std::vector<double> v = t.to_vector();
  for (std::int64_t r = 0; r < N; ++r) {
    double s = 0;
    for (std::int64_t c = 0; c < C; ++c) s += v[r * C + c];
    for (std::int64_t c = 0; c < C; ++c) v[r * C + c] /= s;
  }
  return Tensor::from_vector(v, {N, C}, DType::Float64);
}

}  // namespace

TEST_CASE("soft-target cross-entropy: one-hot targets give cross_entropy, smoothing included",
          "[nn][soft_ce]") {
  Tensor z = leaf({5, 4}, 1);
  const std::vector<std::int64_t> labels = {0, 3, 1, 1, 2};
  std::vector<double> onehot(20, 0.0);
  for (int r = 0; r < 5; ++r) onehot[r * 4 + labels[r]] = 1.0;
  Tensor q = Tensor::from_vector(onehot, {5, 4}, DType::Float64);
  for (double eps : {0.0, 0.1}) {
    const double hard = cross_entropy(z, Tensor::from_indices(labels, {5}), {-100, eps}).item();
    REQUIRE(soft_target_cross_entropy(z, q, eps).item() == Approx(hard).epsilon(1e-12));
  }
}

TEST_CASE("soft-target cross-entropy: the fused op matches the composed one and gradchecks",
          "[nn][soft_ce]") {
  Tensor q = probabilities(6, 5, 2).requires_grad_();
  for (double eps : {0.0, 0.1}) {
    Tensor z = leaf({6, 5}, 3);
    REQUIRE(soft_target_cross_entropy(z, q, eps).item() ==
            Approx(soft_target_cross_entropy_composed(z, q, eps).item()).epsilon(1e-12));
    auto fused = [eps](const std::vector<Tensor>& in) {
      return soft_target_cross_entropy(in[0], in[1], eps);
    };
    require_gradcheck(fused, {z, q});  // both the logits' gradient and the targets'
  }
  // Extreme logits: finite, and log 2 for two equal huge logits against (1/2, 1/2).
  Tensor huge = Tensor::from_vector({1e30, 1e30}, {1, 2}, DType::Float64);
  Tensor half = Tensor::from_vector({0.5, 0.5}, {1, 2}, DType::Float64);
  REQUIRE(soft_target_cross_entropy(huge, half).item() == Approx(std::log(2.0)));
  // A −∞ logit for a class the target never names costs nothing.
  Tensor minf = Tensor::from_vector({0.0, -INFINITY}, {1, 2}, DType::Float64);
  Tensor first = Tensor::from_vector({1.0, 0.0}, {1, 2}, DType::Float64);
  REQUIRE(soft_target_cross_entropy(minf, first).item() == 0.0);
}

TEST_CASE("soft-target cross-entropy: shapes are checked", "[nn][soft_ce]") {
  Tensor z = Tensor::zeros({2, 3});
  REQUIRE_THROWS_WITH(soft_target_cross_entropy(z, Tensor::zeros({2, 4})),
                      Contains("do not match logits of shape"));
  REQUIRE_THROWS_WITH(soft_target_cross_entropy(z, Tensor::zeros({2, 3}), 1.5),
                      Contains("label_smoothing must be in [0, 1]"));
  REQUIRE_THROWS_WITH(soft_target_cross_entropy(Tensor::zeros({0, 3}), Tensor::zeros({0, 3})),
                      Contains("N, C >= 1"));
}
