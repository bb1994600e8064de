// The keypoint model's batches: images and packed heatmap targets, epochs of new or shuffled
// samples, random mirroring.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "core/uwaga.h"
#include "data/pose/pose_batches.h"
#include "data/pose/stick_figures.h"
#include "nn/loss.h"

using namespace uwaga;
using Catch::Contains;

namespace {

// Two joints, a left (0) and a right (1) one.
const SkeletonSpec& two_joints() {
  static const SkeletonSpec s{{"left", "right"}, {{0, 1}}, {{0, 1}}, {0.05f, 0.05f}};
  return s;
}

// Sample i: a 1 × 4 × 6 image, 0 but for a marker 1 at (row 0, column 0) and the sample's number
// i + 1 at (row 1, column 0); the left joint visible at the centre of pixel (2, 1), the right one
// hidden at (2, 5).
PoseSample numbered_sample(std::int64_t i) {
  PoseSample s;
  s.image = Tensor::zeros({1, 4, 6});
  s.image.set({0, 0, 0}, 1);
  s.image.set({0, 1, 0}, static_cast<double>(i + 1));
  s.x = {1.5f, 5.5f};
  s.y = {2.5f, 2.5f};
  s.visible = {1, 0};
  s.area = 10, s.torso = 3;
  return s;
}

PoseSampleSource numbered(std::int64_t size) { return {size, &two_joints(), numbered_sample}; }

const HeatmapTargetOptions kTargets{.height = 4, .width = 6, .stride = 1, .sigma = 1};

// The sample numbers of a batch, and how many of its images are mirrored (the marker moved from
// column 0 to column 5).
std::pair<std::vector<std::int64_t>, std::int64_t> read_batch(const Batch& b) {
  std::vector<std::int64_t> ids;
  std::int64_t mirrored = 0;
  for (std::int64_t r = 0; r < b.rows(); ++r) {
    const bool flipped = b.inputs[0].at({r, 0, 0, 5}) == 1;
    mirrored += flipped;
    ids.push_back(static_cast<std::int64_t>(b.inputs[0].at({r, 0, 1, flipped ? 5 : 0})) - 1);
  }
  return {ids, mirrored};
}

}  // namespace

TEST_CASE("make_pose_batch: images, and each joint's Gaussian packed with its visibility",
          "[data][pose_batches]") {
  const Batch b = make_pose_batch({numbered_sample(0), numbered_sample(1)}, kTargets);
  REQUIRE(b.inputs.size() == 1);
  REQUIRE(b.inputs[0].shape() == Shape{2, 1, 4, 6});
  REQUIRE(b.inputs[0].at({1, 0, 1, 0}) == 2);
  REQUIRE(b.targets.shape() == Shape{2, 2, 1 + 4 * 6});
  const nn::KeypointTargets t = nn::unpack_keypoint_targets(b.targets, 4, 6);
  REQUIRE(t.weights.to_vector() == std::vector<double>{1, 0, 1, 0});
  // The visible joint sits on the centre of cell (2, 1): the peak, 1; a neighbour exp(−1/2).
  REQUIRE(t.heatmaps.at({0, 0, 2, 1}) == Approx(1.0));
  REQUIRE(t.heatmaps.at({0, 0, 2, 2}) == Approx(std::exp(-0.5)));
  double hidden = 0;
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 6; ++j) hidden += std::abs(t.heatmaps.at({1, 1, i, j}));
  REQUIRE(hidden == 0);  // a hidden joint has no target

  PoseSample wide = numbered_sample(2);
  wide.image = Tensor::zeros({1, 4, 8});
  REQUIRE_THROWS_WITH(make_pose_batch({numbered_sample(0), wide}, kTargets),
                      Contains("sample 1 has an image (1, 4, 8)") &&
                          Contains("sample 0 (1, 4, 6)"));
  REQUIRE_THROWS_WITH(make_pose_batch({}, kTargets), Contains("no samples"));
}

TEST_CASE("PoseBatches: epoch e shows samples e·n … e·n + n − 1, shuffled by (seed, e)",
          "[data][pose_batches]") {
  // A source as large as three epochs of 12: every epoch its own samples.
  PoseBatches batches(numbered(36), 12, 4, kTargets, false, 7);
  REQUIRE(batches.batches_per_epoch() == 3);
  for (std::int64_t epoch = 0; epoch < 3; ++epoch) {
    batches.begin_epoch(epoch);
    std::vector<std::int64_t> seen;
    for (std::int64_t i = 0; i < 3; ++i) {
      auto [ids, mirrored] = read_batch(batches.batch(i));
      REQUIRE(mirrored == 0);  // no flipping asked for
      seen.insert(seen.end(), ids.begin(), ids.end());
    }
    std::vector<std::int64_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::int64_t> expected(12);
    for (std::int64_t j = 0; j < 12; ++j) expected[j] = epoch * 12 + j;
    REQUIRE(sorted == expected);
    REQUIRE(seen != sorted);  // shuffled
  }
  // A smaller source wraps around: every epoch shows its samples again, in a new order.
  PoseBatches again(numbered(12), 12, 4, kTargets, false, 7);
  again.begin_epoch(0);
  const auto first = read_batch(again.batch(0)).first;
  again.begin_epoch(1);
  const auto second = read_batch(again.batch(0)).first;
  REQUIRE(first != second);
  again.begin_epoch(0);  // (seed, epoch, i) alone decide the batch
  REQUIRE(read_batch(again.batch(0)).first == first);
  PoseBatches other_seed(numbered(12), 12, 4, kTargets, false, 8);
  other_seed.begin_epoch(0);
  REQUIRE(read_batch(other_seed.batch(0)).first != first);
}

TEST_CASE("PoseBatches mirrors about half the samples, left and right joints swapped",
          "[data][pose_batches]") {
  PoseBatches batches(numbered(400), 400, 100, kTargets, true, 3);
  batches.begin_epoch(0);
  std::int64_t mirrored = 0;
  for (std::int64_t i = 0; i < 4; ++i) {
    const Batch b = batches.batch(i);
    mirrored += read_batch(b).second;
    const nn::KeypointTargets t = nn::unpack_keypoint_targets(b.targets, 4, 6);
    for (std::int64_t r = 0; r < b.rows(); ++r) {
      const bool flipped = b.inputs[0].at({r, 0, 0, 5}) == 1;
      // Mirrored, the visible joint at x = 1.5 moves to 6 − 1.5 = 4.5 and becomes the right one.
      REQUIRE(t.weights.at({r, flipped ? 1 : 0}) == 1);
      REQUIRE(t.weights.at({r, flipped ? 0 : 1}) == 0);
      REQUIRE(t.heatmaps.at({r, flipped ? 1 : 0, 2, flipped ? 4 : 1}) == Approx(1.0));
    }
  }
  REQUIRE(mirrored > 150);
  REQUIRE(mirrored < 250);
}

TEST_CASE("PoseBatches of stick figures are the same for the same seed", "[data][pose_batches]") {
  StickFigures figures(StickFigureConfig{}, 64, 5);
  const HeatmapTargetOptions targets{.height = 32, .width = 24, .stride = 2, .sigma = 1.5f};
  PoseBatches a(pose_sample_source(figures), 32, 8, targets, true, 1);
  PoseBatches b(pose_sample_source(figures), 32, 8, targets, true, 1);
  a.begin_epoch(1);
  b.begin_epoch(1);
  const Batch x = a.batch(2), y = b.batch(2);
  REQUIRE(x.inputs[0].shape() == Shape{8, 1, 64, 48});
  REQUIRE(x.targets.shape() == Shape{8, 15, 1 + 32 * 24});
  REQUIRE(x.inputs[0].to_vector() == y.inputs[0].to_vector());
  REQUIRE(x.targets.to_vector() == y.targets.to_vector());
}

TEST_CASE("PoseBatches refuses sizes that do not fit", "[data][pose_batches]") {
  REQUIRE_THROWS_WITH(PoseBatches(numbered(10), 12, 4, kTargets, false, 0),
                      Contains("an epoch of 12 samples") && Contains("at most the source's 10"));
  REQUIRE_THROWS_WITH(PoseBatches(numbered(10), 3, 4, kTargets, false, 0),
                      Contains("must hold one batch of 4"));
  REQUIRE_THROWS_WITH(PoseBatches(numbered(10), 8, 0, kTargets, false, 0),
                      Contains("batch_size must be at least 1"));
  PoseBatches batches(numbered(10), 8, 4, kTargets, false, 0);
  REQUIRE_THROWS_WITH(batches.batch(0), Contains("begin_epoch first"));
  batches.begin_epoch(0);
  REQUIRE_THROWS_WITH(batches.batch(2), Contains("batch 2 of 2"));
}
