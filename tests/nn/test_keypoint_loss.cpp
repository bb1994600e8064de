// KeypointMSELoss (ViTPose's JointsMSELoss with target weights): a value worked by hand and
// checked in PyTorch, gradcheck, the packed targets, and exact recombination of a split batch.
#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/loss.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

// Random targets (B, K, 1 + h·w): heatmaps in [0, 1), weights 0 or 1 (joint k of example b is
// invisible when (b + k) % 3 == 0).
Tensor random_targets(std::int64_t B, std::int64_t K, std::int64_t h, std::int64_t w,
                      std::uint64_t seed) {
  Generator gen(seed);
  Tensor heatmaps = Tensor::uniform({B, K, h, w}, gen, 0.0, 1.0, DType::Float64);
  Tensor weights = Tensor::ones({B, K}, DType::Float64);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t k = 0; k < K; ++k)
      if ((b + k) % 3 == 0) weights.set({b, k}, 0.0);
  return pack_keypoint_targets(heatmaps, weights);
}

}  // namespace

TEST_CASE("KeypointMSELoss of a small example worked by hand", "[nn][keypoint_loss]") {
  // B = 1, K = 2, h = 1, w = 2. P = [[0.5, 1.0], [0.2, 0.0]], H = [[0, 1], [1, 0]], weights
  // (1, 0.5) — 0.5 only to show that the weight is squared, as the reference's
  // MSE(P·w, H·w) does:
  //   (1·(0.5 − 0))² = 0.25,  (1·(1 − 1))² = 0,  (0.5·(0.2 − 1))² = 0.16,  (0.5·(0 − 0))² = 0
  //   L = (0.25 + 0 + 0.16 + 0) / 4 = 0.1025
  //   dL/dP = 2 w² (P − H) / 4 = (0.25, 0, −0.1, 0)
  // PyTorch 1.13 agrees (mmpose's JointsMSELoss, use_target_weight=True, written out):
  //   pr, gt = P.reshape(1, 2, -1).split(1, 1), H.reshape(1, 2, -1).split(1, 1)
  //   sum(MSELoss()(pr[k].squeeze(1) * w[:, k], gt[k].squeeze(1) * w[:, k]) for k) / 2
  //   → 0.10250000000000001, grad [0.25, 0.0, -0.1, 0.0]
  Tensor P = Tensor::from_vector({0.5, 1.0, 0.2, 0.0}, {1, 2, 1, 2}, DType::Float64);
  P.requires_grad_();
  Tensor H = Tensor::from_vector({0, 1, 1, 0}, {1, 2, 1, 2}, DType::Float64);
  Tensor w = Tensor::from_vector({1, 0.5}, {1, 2}, DType::Float64);
  Tensor targets = pack_keypoint_targets(H, w);
  REQUIRE(targets.shape() == Shape{1, 2, 3});
  REQUIRE(targets.to_vector() == std::vector<double>{1, 0, 1, 0.5, 1, 0});  // weight first

  KeypointMSELoss loss;
  Tensor L = loss(P, targets);
  REQUIRE(L.shape() == Shape{});
  REQUIRE(L.item() == Approx(0.1025).epsilon(1e-14));
  REQUIRE(loss.count(targets) == 4);
  L.backward();
  const std::vector<double> dP = {0.25, 0.0, -0.1, 0.0};
  for (int i = 0; i < 4; ++i) REQUIRE(P.grad().flat(i) == Approx(dP[i]).epsilon(1e-14));
}

TEST_CASE("KeypointMSELoss passes gradcheck; invisible joints get no gradient",
          "[nn][keypoint_loss]") {
  const Tensor targets = random_targets(2, 3, 4, 5, 11);
  KeypointMSELoss loss;
  require_gradcheck([&](const std::vector<Tensor>& in) { return loss(in[0], targets); },
                    {leaf({2, 3, 4, 5}, 12)});

  Tensor P = leaf({2, 3, 4, 5}, 13);
  loss(P, targets).backward();
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t k = 0; k < 3; ++k) {
      double largest = 0;
      for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t j = 0; j < 5; ++j)
          largest = std::max(largest, std::abs(P.grad().at({b, k, i, j})));
      INFO("b " << b << " k " << k);
      if ((b + k) % 3 == 0) REQUIRE(largest == 0);
      else REQUIRE(largest > 0);
    }
}

TEST_CASE("KeypointMSELoss of a split batch recombines to the whole with count()",
          "[nn][keypoint_loss]") {
  // nn/loss.h: L = Σ_c (n_c / n) L_c with n_c = count(targets of part c), as the Trainer
  // combines micro-batches. Parts of 1 and 4 rows of a 5-row batch.
  const std::int64_t B = 5, K = 4, h = 3, w = 2;
  const Tensor targets = random_targets(B, K, h, w, 21);
  Generator gen(22);
  const Tensor P = Tensor::randn({B, K, h, w}, gen, DType::Float64);
  KeypointMSELoss loss;
  REQUIRE(loss.count(targets) == B * K * h * w);
  REQUIRE(loss.items(targets) == B);  // the progress line's items/s counts samples, not cells
  const double whole = loss(P, targets).item();
  double combined = 0;
  const std::int64_t n = loss.count(targets);
  for (auto [begin, end] : {std::pair<std::int64_t, std::int64_t>{0, 1}, {1, 5}}) {
    const Tensor t = slice(targets, 0, begin, end), p = slice(P, 0, begin, end);
    combined += static_cast<double>(loss.count(t)) / static_cast<double>(n) * loss(p, t).item();
  }
  REQUIRE(combined == Approx(whole).epsilon(1e-14));
  // The whole is the formula: the mean over every cell of (w (P − H))².
  const KeypointTargets u = unpack_keypoint_targets(targets, h, w);
  double sum = 0;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t i = 0; i < h; ++i)
        for (std::int64_t j = 0; j < w; ++j) {
          const double d =
              u.weights.at({b, k}) * (P.at({b, k, i, j}) - u.heatmaps.at({b, k, i, j}));
          sum += d * d;
        }
  REQUIRE(whole == Approx(sum / static_cast<double>(B * K * h * w)).epsilon(1e-14));
}

TEST_CASE("pack_keypoint_targets and unpack_keypoint_targets are inverses",
          "[nn][keypoint_loss]") {
  Generator gen(31);
  Tensor heatmaps = Tensor::uniform({2, 3, 4, 5}, gen);  // float32
  Tensor weights = Tensor::from_indices({1, 0, 1, 1, 1, 0}, {2, 3});
  Tensor packed = pack_keypoint_targets(heatmaps, weights);
  REQUIRE(packed.shape() == Shape{2, 3, 21});
  REQUIRE(packed.dtype() == DType::Float32);
  REQUIRE(packed.at({0, 1, 0}) == 0.0);
  REQUIRE(packed.at({1, 2, 1 + 2 * 5 + 3}) == heatmaps.at({1, 2, 2, 3}));
  const KeypointTargets u = unpack_keypoint_targets(packed, 4, 5);
  REQUIRE(u.heatmaps.to_vector() == heatmaps.to_vector());
  REQUIRE(u.weights.to_vector() == weights.to(DType::Float32).to_vector());
}

TEST_CASE("KeypointMSELoss rejects bad shapes with clear messages", "[nn][keypoint_loss]") {
  KeypointMSELoss loss;
  const Tensor P = Tensor::zeros({2, 3, 4, 5});
  REQUIRE_THROWS_WITH(loss(P, Tensor::zeros({2, 3, 20})),
                      Contains("KeypointMSELoss: output (2, 3, 4, 5) and targets (2, 3, 20) do "
                               "not fit: expected output (B, K, h, w) and targets "
                               "(B, K, 1 + h·w)"));
  REQUIRE_THROWS_WITH(loss(P, Tensor::zeros({2, 3, 21}, DType::Float64)),
                      Contains("KeypointMSELoss"));
  REQUIRE_THROWS_WITH(loss.count(Tensor::zeros({2, 3})),
                      Contains("KeypointMSELoss: targets must be (B, K, 1 + h·w), got shape "
                               "(2, 3)"));
  REQUIRE_THROWS_WITH(pack_keypoint_targets(P, Tensor::zeros({2, 4})),
                      Contains("pack_keypoint_targets: heatmaps (2, 3, 4, 5) and weights (2, 4) do "
                               "not fit: expected (B, K, h, w) and (B, K)"));
  REQUIRE_THROWS_WITH(unpack_keypoint_targets(Tensor::zeros({2, 3, 21}), 4, 4),
                      Contains("unpack_keypoint_targets: targets (2, 3, 21) do not hold 4 × 4 "
                               "heatmaps"));
}
