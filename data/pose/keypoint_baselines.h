#pragma once
// Two keypoint baselines a pose model must beat by far. Both answer in the shape of
// nn::decode_heatmaps_batch: (N, K, 3) holding x, y, score in input pixels
// (nn/pose/keypoint_heatmaps.h).
//
// Mean pose: every image gets the same pose, each joint at the mean of its visible positions in
// the training set — what a model that ignores its input can do at best under squared error.
//
// Brightest pixel: every joint of an image at the centre of its brightest pixel (channels
// averaged; the first in row-major order on ties), unsmoothed — what "find the figure" alone
// gives where the figure is brighter than the background.
//
// Neither has a confidence, so every joint scores 1 (each image then ranks equally in OKS-AP,
// by image order).
#include <cstdint>

#include "core/tensor.h"

namespace uwaga {

// keypoints (N, K, 2 or 3; the third column unread), visible (N, K) nonzero where the joint
// counts → (K, 2) float32: per joint, the mean x and y over the instances where it is visible.
// Every joint must be visible somewhere.
Tensor mean_pose(const Tensor& keypoints, const Tensor& visible);

// pose (K, 2) → (N, K, 3): the pose for each of N images, score 1.
Tensor predict_mean_pose(const Tensor& pose, std::int64_t num_images);

// images (N, C, H, W) → (N, K, 3): all K joints at the brightest pixel's centre (col + 0.5,
// row + 0.5), score 1.
Tensor predict_brightest_pixel(const Tensor& images, std::int64_t num_joints);

}  // namespace uwaga
