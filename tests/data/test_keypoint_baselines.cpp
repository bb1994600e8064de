// The two keypoint baselines: the training set's mean pose, and the brightest pixel.
#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "data/pose/keypoint_baselines.h"

using namespace uwaga;
using Catch::Contains;

TEST_CASE("mean_pose averages each joint over the instances where it is visible",
          "[data][keypoint_baselines]") {
  // Three instances, two joints. Joint 0 is visible in all: x (10 + 20 + 60)/3 = 30,
  // y (0 + 6 + 0)/3 = 2. Joint 1 only in instances 0 and 2: x (1 + 3)/2 = 2, y (5 + 9)/2 = 7 —
  // instance 1's (100, 100) is not counted.
  Tensor keypoints = Tensor::from_vector({10, 0, 1, 5, 20, 6, 100, 100, 60, 0, 3, 9}, {3, 2, 2});
  Tensor visible = Tensor::from_vector({2, 1, 1, 0, 1, 2}, {3, 2});
  Tensor pose = mean_pose(keypoints, visible);
  REQUIRE(pose.shape() == Shape{2, 2});
  REQUIRE(pose.to_vector() == std::vector<double>{30, 2, 2, 7});
  // (N, K, 3) with a visibility column: the column is not read, `visible` decides.
  Tensor with_v = cat({keypoints, Tensor::zeros({3, 2, 1})}, 2);
  REQUIRE(mean_pose(with_v, visible).to_vector() == pose.to_vector());

  // The same pose for every image, score 1.
  Tensor predicted = predict_mean_pose(pose, 4);
  REQUIRE(predicted.shape() == Shape{4, 2, 3});
  for (std::int64_t n = 0; n < 4; ++n) {
    REQUIRE(predicted.at({n, 0, 0}) == 30);
    REQUIRE(predicted.at({n, 0, 1}) == 2);
    REQUIRE(predicted.at({n, 1, 0}) == 2);
    REQUIRE(predicted.at({n, 1, 1}) == 7);
    REQUIRE(predicted.at({n, 1, 2}) == 1);
  }

  REQUIRE_THROWS_WITH(mean_pose(keypoints, Tensor::from_vector({1, 0, 1, 0, 1, 0}, {3, 2})),
                      Contains("mean_pose: joint 1 is visible in none of the 3 instances"));
  REQUIRE_THROWS_WITH(mean_pose(keypoints, Tensor::ones({2, 2})),
                      Contains("mean_pose: keypoints (3, 2, 2) and visible (2, 2) do not fit"));
  REQUIRE_THROWS_WITH(predict_mean_pose(Tensor::zeros({2, 3}), 4),
                      Contains("predict_mean_pose: pose must be (K, 2), got shape (2, 3)"));
}

TEST_CASE("predict_brightest_pixel puts every joint on the brightest pixel's centre",
          "[data][keypoint_baselines]") {
  // Two RGB images 4 × 5. Image 0: pixel (row 2, col 3) is bright in every channel (mean 0.9);
  // pixel (0, 0) is brighter in one channel only (mean 1/3) — channels are averaged, so
  // (2, 3) wins: x = 3.5, y = 2.5. Image 1 is uniform: the first pixel, (0.5, 0.5).
  Tensor images = Tensor::zeros({2, 3, 4, 5});
  for (std::int64_t c = 0; c < 3; ++c) images.set({0, c, 2, 3}, 0.9);
  images.set({0, 1, 0, 0}, 1.0);
  for (std::int64_t c = 0; c < 3; ++c)
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < 5; ++j) images.set({1, c, i, j}, 0.5);
  Tensor predicted = predict_brightest_pixel(images, 3);
  REQUIRE(predicted.shape() == Shape{2, 3, 3});
  for (std::int64_t k = 0; k < 3; ++k) {
    REQUIRE(predicted.at({0, k, 0}) == 3.5);
    REQUIRE(predicted.at({0, k, 1}) == 2.5);
    REQUIRE(predicted.at({0, k, 2}) == 1.0);
    REQUIRE(predicted.at({1, k, 0}) == 0.5);
    REQUIRE(predicted.at({1, k, 1}) == 0.5);
  }

  REQUIRE_THROWS_WITH(predict_brightest_pixel(Tensor::zeros({3, 4, 5}), 3),
                      Contains("predict_brightest_pixel: images must be (N, C, H, W)"));
  REQUIRE_THROWS_WITH(predict_brightest_pixel(images, 0),
                      Contains("predict_brightest_pixel: num_joints must be positive, got 0"));
}
