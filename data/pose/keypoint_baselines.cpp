#include "data/pose/keypoint_baselines.h"

#include <cmath>

#include "core/error.h"

namespace uwaga {

Tensor mean_pose(const Tensor& keypoints, const Tensor& visible) {
  check_defined(keypoints, "mean_pose");
  check_defined(visible, "mean_pose");
  if (keypoints.dim() != 3 || (keypoints.size(2) != 2 && keypoints.size(2) != 3) ||
      visible.dim() != 2 || visible.size(0) != keypoints.size(0) ||
      visible.size(1) != keypoints.size(1) || keypoints.size(1) == 0)
    fail("mean_pose: keypoints ", shape_str(keypoints.shape()), " and visible ",
         shape_str(visible.shape()), " do not fit: expected (N, K, 2 or 3) and (N, K)");
  const std::int64_t N = keypoints.size(0), K = keypoints.size(1), C = keypoints.size(2);
  const std::vector<double> kp = keypoints.to_vector();  // (N, K, C)
  const std::vector<double> v = visible.to_vector();     // (N, K)
  Tensor pose = Tensor::empty({K, 2});                    // (K, 2)
  for (std::int64_t k = 0; k < K; ++k) {
    double sx = 0, sy = 0;
    std::int64_t n_visible = 0;
    for (std::int64_t n = 0; n < N; ++n) {
      if (v[static_cast<std::size_t>(n * K + k)] == 0) continue;
      const auto at = static_cast<std::size_t>((n * K + k) * C);
      if (!std::isfinite(kp[at]) || !std::isfinite(kp[at + 1]))
        fail("mean_pose: visible joint ", k, " of instance ", n, " is at (", kp[at], ", ",
             kp[at + 1], "); expected finite coordinates");
      sx += kp[at];
      sy += kp[at + 1];
      ++n_visible;
    }
    if (n_visible == 0)
      fail("mean_pose: joint ", k, " is visible in none of the ", N,
           " instances, so it has no mean position");
    pose.set({k, 0}, sx / static_cast<double>(n_visible));
    pose.set({k, 1}, sy / static_cast<double>(n_visible));
  }
  return pose;
}

Tensor predict_mean_pose(const Tensor& pose, std::int64_t num_images) {
  check_defined(pose, "predict_mean_pose");
  if (pose.dim() != 2 || pose.size(1) != 2 || pose.size(0) == 0)
    fail("predict_mean_pose: pose must be (K, 2), got shape ", shape_str(pose.shape()));
  if (num_images < 0) fail("predict_mean_pose: num_images must be ≥ 0, got ", num_images);
  const std::int64_t K = pose.size(0);
  const std::vector<double> p = pose.to_vector();  // (K, 2)
  Tensor out = Tensor::empty({num_images, K, 3});  // (N, K, 3)
  float* o = out.data<float>();
  for (std::int64_t n = 0; n < num_images; ++n)
    for (std::int64_t k = 0; k < K; ++k) {
      *o++ = static_cast<float>(p[static_cast<std::size_t>(2 * k)]);
      *o++ = static_cast<float>(p[static_cast<std::size_t>(2 * k + 1)]);
      *o++ = 1.0f;
    }
  return out;
}

Tensor predict_brightest_pixel(const Tensor& images, std::int64_t num_joints) {
  check_defined(images, "predict_brightest_pixel");
  if (images.dim() != 4 || images.numel() == 0)
    fail("predict_brightest_pixel: images must be (N, C, H, W) with no empty dimension, got "
         "shape ", shape_str(images.shape()));
  check_size_in_range("predict_brightest_pixel", "num_joints", num_joints, 1000);
  const std::int64_t N = images.size(0), C = images.size(1), H = images.size(2),
                     W = images.size(3);
  const std::vector<double> px = images.to_vector();  // (N, C, H, W)
  Tensor out = Tensor::empty({N, num_joints, 3});     // (N, K, 3)
  float* o = out.data<float>();
  for (std::int64_t n = 0; n < N; ++n) {
    std::int64_t best = 0;
    double best_value = -INFINITY;
    for (std::int64_t p = 0; p < H * W; ++p) {
      double brightness = 0;
      for (std::int64_t c = 0; c < C; ++c)
        brightness += px[static_cast<std::size_t>((n * C + c) * H * W + p)];
      if (std::isnan(brightness))
        fail("predict_brightest_pixel: image ", n, " holds NaN at pixel (", p / W, ", ", p % W,
             ")");
      if (brightness > best_value) {  // strict: the first brightest pixel wins ties
        best_value = brightness;
        best = p;
      }
    }
    for (std::int64_t k = 0; k < num_joints; ++k) {
      *o++ = static_cast<float>(best % W) + 0.5f;
      *o++ = static_cast<float>(best / W) + 0.5f;
      *o++ = 1.0f;
    }
  }
  return out;
}

}  // namespace uwaga
