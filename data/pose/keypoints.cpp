#include "data/pose/keypoints.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace uwaga {

int SkeletonSpec::joint(const std::string& name) const {
  const auto it = std::find(joint_names.begin(), joint_names.end(), name);
  if (it == joint_names.end()) fail("skeleton: no joint called \"", name, "\"");
  return static_cast<int>(it - joint_names.begin());
}

const SkeletonSpec& coco_skeleton() {
  static const SkeletonSpec spec = [] {
    SkeletonSpec s;
    s.joint_names = {"nose",        "left_eye",       "right_eye",  "left_ear",  "right_ear",
                     "left_shoulder", "right_shoulder", "left_elbow", "right_elbow",
                     "left_wrist",  "right_wrist",    "left_hip",   "right_hip", "left_knee",
                     "right_knee",  "left_ankle",     "right_ankle"};
    // cocoapi's skeleton, which numbers joints from 1: [[16,14],[14,12],[17,15],[15,13],[12,13],
    // [6,12],[7,13],[6,7],[6,8],[7,9],[8,10],[9,11],[2,3],[1,2],[1,3],[2,4],[3,5],[4,6],[5,7]].
    s.bones = {{15, 13}, {13, 11}, {16, 14}, {14, 12}, {11, 12}, {5, 11}, {6, 12},
               {5, 6},   {5, 7},   {6, 8},   {7, 9},   {8, 10},  {1, 2},  {0, 1},
               {0, 2},   {1, 3},   {2, 4},   {3, 5},   {4, 6}};
    s.flip_pairs = {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}, {13, 14}, {15, 16}};
    // cocoapi's COCOeval.computeOks: sigmas = [.26, .25, .25, .35, .35, .79, .79, .72, .72, .62,
    // .62, 1.07, 1.07, .87, .87, .89, .89] / 10.
    s.oks_sigmas = {.026f, .025f, .025f, .035f, .035f, .079f, .079f, .072f, .072f,
                    .062f, .062f, .107f, .107f, .087f, .087f, .089f, .089f};
    return s;
  }();
  return spec;
}

const SkeletonSpec& stick_figure_skeleton() {
  static const SkeletonSpec spec = [] {
    SkeletonSpec s;
    s.joint_names = {"head",     "neck",        "left_shoulder", "right_shoulder", "left_elbow",
                     "right_elbow", "left_wrist", "right_wrist",   "pelvis",         "left_hip",
                     "right_hip", "left_knee",  "right_knee",    "left_ankle",     "right_ankle"};
    s.bones = {{0, 1}, {1, 2},  {1, 3},   {2, 4},   {3, 5},   {4, 6},   {5, 7},
               {1, 8}, {8, 9},  {8, 10},  {9, 11},  {10, 12}, {11, 13}, {12, 14}};
    s.flip_pairs = {{2, 3}, {4, 5}, {6, 7}, {9, 10}, {11, 12}, {13, 14}};
    s.oks_sigmas.assign(s.joint_names.size(), 0.05f);
    return s;
  }();
  return spec;
}

void check_pose_sample(const PoseSample& sample, const SkeletonSpec& skeleton,
                       const std::string& what) {
  const Tensor& image = sample.image;
  if (!image.defined() || image.dim() != 3 || image.dtype() != DType::Float32)
    fail(what, ": the image should be a (C, H, W) float32 tensor");
  const std::size_t k = skeleton.joint_names.size();
  if (sample.x.size() != k || sample.y.size() != k || sample.visible.size() != k)
    fail(what, ": ", sample.x.size(), " x, ", sample.y.size(), " y and ", sample.visible.size(),
         " visibility values for a skeleton of ", k, " joints");
  for (std::size_t j = 0; j < k; ++j) {
    if (!std::isfinite(sample.x[j]) || !std::isfinite(sample.y[j]))
      fail(what, ": joint ", j, " (", skeleton.joint_names[j], ") is at (", sample.x[j], ", ",
           sample.y[j], ")");
    if (sample.visible[j] > 1)
      fail(what, ": joint ", j, " (", skeleton.joint_names[j], ") has visibility ",
           int{sample.visible[j]}, " (expected 0 or 1)");
  }
}

void flip_horizontal(PoseSample& sample, const SkeletonSpec& skeleton) {
  check_pose_sample(sample, skeleton, "flip_horizontal");
  const std::int64_t C = sample.image.size(0), H = sample.image.size(1), W = sample.image.size(2);
  // A new tensor: the sample's image may share its storage with someone else's.
  Tensor mirrored = Tensor::empty({C, H, W});
  const float* src = sample.image.data<float>();  // (C, H, W)
  float* dst = mirrored.data<float>();            // (C, H, W)
  for (std::int64_t row = 0; row < C * H; ++row, src += W, dst += W)
    std::reverse_copy(src, src + W, dst);
  sample.image = mirrored;
  for (float& x : sample.x) x = static_cast<float>(W) - x;
  for (const auto& [left, right] : skeleton.flip_pairs) {
    std::swap(sample.x[left], sample.x[right]);
    std::swap(sample.y[left], sample.y[right]);
    std::swap(sample.visible[left], sample.visible[right]);
  }
}

}  // namespace uwaga
