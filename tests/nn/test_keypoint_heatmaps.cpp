// Gaussian keypoint heatmaps and their decoding: values against the formula, decode ∘ encode
// within a quarter cell (and better than without the quarter step), edges, empty maps, batches.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/uwaga.h"
#include "nn/pose/keypoint_heatmaps.h"

using namespace uwaga;
using namespace uwaga::nn;
using Catch::Contains;

namespace {

// The header's formula, written out: H(i, j) = exp(−((j + 0.5 − x/s)² + (i + 0.5 − y/s)²)/(2σ²)).
double gaussian_at(std::int64_t i, std::int64_t j, double x, double y, double s, double sigma) {
  const double du = j + 0.5 - x / s, dv = i + 0.5 - y / s;
  return std::exp(-(du * du + dv * dv) / (2 * sigma * sigma));
}

// Decoding one joint at (x, y) from its own map.
DecodedKeypoints round_trip(float x, float y, std::int64_t h, std::int64_t w, float stride,
                            float sigma, bool subpixel = true) {
  return decode_heatmaps(gaussian_heatmaps({x}, {y}, {1}, h, w, stride, sigma), stride, subpixel);
}

}  // namespace

TEST_CASE("gaussian_heatmaps follow the formula; invisible joints get zero maps",
          "[nn][keypoint_heatmaps]") {
  const float s = 4, sigma = 2;
  const std::vector<float> x = {10.0f, 30.5f, 3.0f}, y = {6.0f, 21.25f, 50.0f};
  Tensor H = gaussian_heatmaps(x, y, {1, 2, 0}, 12, 10, s, sigma);
  REQUIRE(H.shape() == Shape{3, 12, 10});
  REQUIRE(H.dtype() == DType::Float32);
  double worst = 0;
  for (std::int64_t k = 0; k < 2; ++k)
    for (std::int64_t i = 0; i < 12; ++i)
      for (std::int64_t j = 0; j < 10; ++j)
        worst = std::max(worst,
                         std::abs(H.at({k, i, j}) - gaussian_at(i, j, x[k], y[k], s, sigma)));
  REQUIRE(worst < 1e-7);
  for (std::int64_t i = 0; i < 12; ++i)
    for (std::int64_t j = 0; j < 10; ++j) REQUIRE(H.at({2, i, j}) == 0.0);  // invisible

  // A joint at a cell's centre: that cell holds exactly 1, the peak. x = 10 is u = 2.5, the
  // centre of column 2; y = 6 is v = 1.5, the centre of row 1. One cell away: exp(−1/8).
  REQUIRE(H.at({0, 1, 2}) == 1.0);
  REQUIRE(H.at({0, 1, 3}) == Approx(std::exp(-1.0 / 8)).epsilon(1e-6));
  // Off-centre, no cell reaches 1: joint 1 is at (7.625, 5.3125), the nearest centre (7.5, 5.5).
  REQUIRE(H.at({1, 5, 7}) < 1.0);
  REQUIRE(H.at({1, 5, 7}) == Approx(std::exp(-(0.125 * 0.125 + 0.1875 * 0.1875) / 8)));
}

TEST_CASE("decode_heatmaps inverts the encoding at cell centres exactly",
          "[nn][keypoint_heatmaps]") {
  // Input pixel coordinates of cell centres, (j + 0.5)·s, for interior and edge cells.
  for (float stride : {1.0f, 4.0f, 16.0f})
    for (std::int64_t j : {0, 1, 5, 15}) {
      const float x = (static_cast<float>(j) + 0.5f) * stride;
      const float y = (static_cast<float>(15 - j) + 0.5f) * stride;
      const DecodedKeypoints d = round_trip(x, y, 16, 16, stride, 2.0f);
      INFO("stride " << stride << " cell " << j);
      REQUIRE(d.x[0] == x);
      REQUIRE(d.y[0] == y);
      REQUIRE(d.score[0] == 1.0f);
    }
}

TEST_CASE("decode(encode(p)) is within a quarter cell, and the quarter step beats the arg-max",
          "[nn][keypoint_heatmaps]") {
  // Joints swept over a cell in both axes, away from the map's edges, for two σ.
  const float stride = 4;
  for (float sigma : {1.0f, 2.0f}) {
    double worst = 0, total_with = 0, total_without = 0;
    int n = 0;
    for (int a = 0; a <= 20; ++a)
      for (int b = 0; b <= 20; ++b) {
        const float u = 7.0f + a / 20.0f, v = 5.0f + b / 20.0f;  // heatmap cells
        const DecodedKeypoints with = round_trip(u * stride, v * stride, 12, 16, stride, sigma);
        const DecodedKeypoints without =
            round_trip(u * stride, v * stride, 12, 16, stride, sigma, false);
        const double ex = std::abs(with.x[0] / stride - u), ey = std::abs(with.y[0] / stride - v);
        worst = std::max({worst, ex, ey});
        total_with += ex + ey;
        total_without += std::abs(without.x[0] / stride - u) + std::abs(without.y[0] / stride - v);
        ++n;
      }
    INFO("sigma " << sigma);
    REQUIRE(worst <= 0.25 + 1e-6);
    // Offsets uniform over a cell: the arg-max alone is off by 0.25 on average per axis, the
    // quarter step by 0.125 (1/8 of a cell); the sums are over 2 axes × 441 joints.
    REQUIRE(total_without / (2 * n) == Approx(0.25).margin(0.02));
    REQUIRE(total_with / (2 * n) == Approx(0.125).margin(0.02));
  }
  // One joint worked by hand: u = 7.8 lies in cell 7 (centre 7.5); its right neighbour is
  // higher, so u = 7.5 + 0.25 = 7.75, and x = 7.75 · 4 = 31. Without the step, 7.5 · 4 = 30.
  REQUIRE(round_trip(31.2f, 22.0f, 12, 16, 4, 2).x[0] == 31.0f);
  REQUIRE(round_trip(31.2f, 22.0f, 12, 16, 4, 2, false).x[0] == 30.0f);
}

TEST_CASE("decode_heatmaps at the map's edges and for empty maps", "[nn][keypoint_heatmaps]") {
  const float s = 4;
  // In the first column (u = 0.8): no left neighbour, so no step along x — the cell centre 0.5.
  // Along y (v = 3.2, interior) the step applies: 3.5 − 0.25 = 3.25.
  DecodedKeypoints d = round_trip(0.8f * s, 3.2f * s, 8, 8, s, 2);
  REQUIRE(d.x[0] == 0.5f * s);
  REQUIRE(d.y[0] == 3.25f * s);
  // In the last row and column (u = v = 7.9 of 8 cells): both axes stay at the centre 7.5.
  d = round_trip(7.9f * s, 7.9f * s, 8, 8, s, 2);
  REQUIRE(d.x[0] == 7.5f * s);
  REQUIRE(d.y[0] == 7.5f * s);
  // In the second column (u = 1.3) the step applies (the reference's 1 < j* would skip it).
  REQUIRE(round_trip(1.3f * s, 4.5f * s, 8, 8, s, 2).x[0] == 1.25f * s);
  // Outside the map (u = −3): the nearest edge cell, with its score below 1.
  d = round_trip(-3.0f * s, 4.5f * s, 8, 8, s, 2);
  REQUIRE(d.x[0] == 0.5f * s);
  REQUIRE(d.score[0] == Approx(std::exp(-3.5 * 3.5 / 8)));
  // A one-cell map: its only cell.
  REQUIRE(round_trip(1.0f, 3.0f, 1, 1, s, 2).x[0] == 0.5f * s);

  // All zero (an invisible joint's map), or nothing above 0: (−1, −1) with the maximum as score.
  Tensor zero = gaussian_heatmaps({5, 9}, {5, 9}, {0, 1}, 6, 6, s, 1);
  d = decode_heatmaps(zero, s);
  REQUIRE(d.x[0] == -1.0f);
  REQUIRE(d.y[0] == -1.0f);
  REQUIRE(d.score[0] == 0.0f);
  REQUIRE(d.x[1] == 9.0f);  // the visible one decodes (u = 2.25: cell 2, step −0.25)
  Tensor negative = Tensor::full({1, 3, 3}, -0.5);
  negative.set({0, 2, 1}, -0.1);
  d = decode_heatmaps(negative, s);
  REQUIRE(d.x[0] == -1.0f);
  REQUIRE(d.score[0] == Approx(-0.1f));
  // Ties: the first maximum in row-major order (here the corner, where no step applies) …
  d = decode_heatmaps(Tensor::ones({1, 3, 4}, DType::Float64), 2);
  REQUIRE(d.x[0] == 1.0f);
  REQUIRE(d.y[0] == 1.0f);
  // … and no step between equal neighbours: a peak at (1, 1) with 0.5 on all four sides.
  Tensor cross = Tensor::from_vector({0, 0.5, 0, 0.5, 1, 0.5, 0, 0.5, 0}, {1, 3, 3});
  d = decode_heatmaps(cross, 2);
  REQUIRE(d.x[0] == 3.0f);
  REQUIRE(d.y[0] == 3.0f);
}

TEST_CASE("gaussian_heatmaps_batch and decode_heatmaps_batch match the single forms",
          "[nn][keypoint_heatmaps]") {
  // (B = 2, K = 3, 3): x, y, visible.
  Tensor kp = Tensor::from_vector({10, 14, 1, 40, 3, 2, 7, 7, 0,
                                   22.5, 30, 1, 0.3, 0.2, 1, 60, 44, 1}, {2, 3, 3});
  Tensor maps = gaussian_heatmaps_batch(kp, 12, 16, 4, 1.5f);
  REQUIRE(maps.shape() == Shape{2, 3, 12, 16});
  Tensor decoded = decode_heatmaps_batch(maps, 4);
  REQUIRE(decoded.shape() == Shape{2, 3, 3});
  for (std::int64_t b = 0; b < 2; ++b) {
    std::vector<float> x, y;
    std::vector<std::uint8_t> v;
    for (std::int64_t k = 0; k < 3; ++k) {
      x.push_back(static_cast<float>(kp.at({b, k, 0})));
      y.push_back(static_cast<float>(kp.at({b, k, 1})));
      v.push_back(kp.at({b, k, 2}) != 0);
    }
    Tensor one = gaussian_heatmaps(x, y, v, 12, 16, 4, 1.5f);
    for (std::int64_t i = 0; i < one.numel(); ++i)
      REQUIRE(maps.flat(b * one.numel() + i) == one.flat(i));
    const DecodedKeypoints d = decode_heatmaps(one, 4);
    for (std::int64_t k = 0; k < 3; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      REQUIRE(decoded.at({b, k, 0}) == d.x[kk]);
      REQUIRE(decoded.at({b, k, 1}) == d.y[kk]);
      REQUIRE(decoded.at({b, k, 2}) == d.score[kk]);
    }
  }
  // Each visible joint inside the map comes back within a quarter cell (1 input pixel).
  REQUIRE(std::abs(decoded.at({0, 0, 0}) - 10) <= 1);
  REQUIRE(std::abs(decoded.at({1, 0, 1}) - 30) <= 1);
  REQUIRE(decoded.at({0, 2, 0}) == -1.0);  // invisible
  // Float64 maps decode the same as float32 ones.
  Tensor d64 = decode_heatmaps_batch(maps.to(DType::Float64), 4);
  for (std::int64_t i = 0; i < d64.numel(); ++i) REQUIRE(d64.flat(i) == Approx(decoded.flat(i)));
}

TEST_CASE("keypoint heatmaps reject bad input with clear messages", "[nn][keypoint_heatmaps]") {
  REQUIRE_THROWS_WITH(gaussian_heatmaps({1}, {1, 2}, {1}, 8, 8, 4, 2),
                      Contains("gaussian_heatmaps: x, y and visible must hold one entry per "
                               "joint, got 1, 2 and 1"));
  REQUIRE_THROWS_WITH(gaussian_heatmaps({1}, {1}, {1}, 8, 8, 0, 2),
                      Contains("gaussian_heatmaps: stride must be a positive number, got 0"));
  REQUIRE_THROWS_WITH(gaussian_heatmaps({1}, {1}, {1}, 8, 8, 4, -1),
                      Contains("sigma must be a positive number of heatmap cells, got -1"));
  REQUIRE_THROWS_WITH(gaussian_heatmaps({1}, {1}, {1}, 0, 8, 4, 2),
                      Contains("gaussian_heatmaps: heatmap_h must be positive, got 0"));
  REQUIRE_THROWS_WITH(gaussian_heatmaps({NAN}, {1}, {1}, 8, 8, 4, 2),
                      Contains("visible joint 0 is at (nan, 1)"));
  REQUIRE_NOTHROW(gaussian_heatmaps({NAN}, {1}, {0}, 8, 8, 4, 2));  // invisible: unread
  REQUIRE_THROWS_WITH(gaussian_heatmaps_batch(Tensor::zeros({2, 3}), 8, 8, 4, 2),
                      Contains("keypoints must be (B, K, 3) holding x, y, visible, got shape "
                               "(2, 3)"));
  REQUIRE_THROWS_WITH(decode_heatmaps(Tensor::zeros({2, 8, 8, 1}), 4),
                      Contains("decode_heatmaps: heatmaps must be (K, h, w)"));
  REQUIRE_THROWS_WITH(decode_heatmaps_batch(Tensor::zeros({2, 8, 8}), 4),
                      Contains("decode_heatmaps_batch: heatmaps must be (B, K, h, w)"));
  Tensor nan_map = Tensor::zeros({2, 1, 4, 4});
  nan_map.set({1, 0, 2, 2}, NAN);
  REQUIRE_THROWS_WITH(decode_heatmaps_batch(nan_map, 4),
                      Contains("decode_heatmaps_batch: heatmap 1 of 2 (shape (2, 1, 4, 4)) holds "
                               "NaN"));
  REQUIRE_THROWS_WITH(decode_heatmaps(Tensor::from_indices({1}, {1, 1, 1}), 4),
                      Contains("expects a float32 or float64 tensor, got int64"));
}
