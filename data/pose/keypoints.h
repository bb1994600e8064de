#pragma once
// Keypoint samples for top-down pose estimation (ViTPose): one person per image, K joints, each a
// position and a flag saying whether the loss and the metrics should count it. Both sources of
// samples give them in this form: data/pose/stick_figures (synthetic) and data/pose/coco_keypoints (COCO).
//
// Coordinates, everywhere in uwaga's pose code: continuous input-pixel coordinates. The image
// spans [0, W] × [0, H]; the pixel in row i, column j covers [j, j+1) × [i, i+1), so its centre is
// (j + 0.5, i + 0.5). Then a mirror image maps x to W − x, scaling by s maps x to s·x, and the
// heatmap cell (r, c) at stride s has its centre at ((c + 0.5)·s, (r + 0.5)·s).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace uwaga {

struct PoseSample {
  Tensor image;                      // (C, H, W) float32 in [0, 1]
  std::vector<float> x, y;           // (K,) joint positions, input pixels (convention above)
  // (K,) 1: labelled and countable, weight 1 in the loss and the metrics; 0: hidden or unlabelled,
  // weight 0. Synthetic joints keep their true position when hidden (x, y stay meaningful);
  // unlabelled COCO joints have none (x = y = 0 as read; the values mean nothing).
  std::vector<std::uint8_t> visible;
  // The object's area in input pixels², the s² of OKS. Synthetic: the area of the bounding box of
  // the figure's joints; COCO: the annotation's "area" (its segment's area) scaled into the crop.
  float area = 0;
  // The reference length of PCK, in input pixels. Synthetic: the torso (neck to pelvis); COCO: the
  // longer side of the annotated person box scaled into the crop (mmpose's "bbox" normalisation).
  float torso = 0;

  std::int64_t num_joints() const { return static_cast<std::int64_t>(x.size()); }
};

// Which joints a skeleton has and how they connect.
struct SkeletonSpec {
  std::vector<std::string> joint_names;          // (K,)
  std::vector<std::pair<int, int>> bones;        // joint index pairs, drawn as limbs
  std::vector<std::pair<int, int>> flip_pairs;   // (left, right): swapped by a mirror image
  // (K,) OKS per-joint constants σ_k: OKS = Σ_k v_k exp(−d_k² / (2 s² (2σ_k)²)) / Σ_k v_k.
  std::vector<float> oks_sigmas;

  std::int64_t num_joints() const { return static_cast<std::int64_t>(joint_names.size()); }
  // The index of the joint called `name`; throws when there is none.
  int joint(const std::string& name) const;
};

// COCO's 17 keypoints (nose, eyes, ears, shoulders, elbows, wrists, hips, knees, ankles), its
// 19-limb skeleton and eight left/right pairs, and cocoapi's sigmas (its per-joint spread of human
// labels, in units of the object's scale): from .025 for the eyes to .107 for the hips.
const SkeletonSpec& coco_skeleton();

// The synthetic figures' 15 joints:
//    0 head        1 neck
//    2 l_shoulder  3 r_shoulder   4 l_elbow  5 r_elbow   6 l_wrist  7 r_wrist
//    8 pelvis      9 l_hip       10 r_hip   11 l_knee   12 r_knee  13 l_ankle  14 r_ankle
// 14 bones, six flip pairs. σ = 0.05 for every joint: the joints are exact, so no joint is harder
// to label than another (COCO's spread between joints is annotator disagreement), and 0.05 — a
// little below COCO's limbs (.062 to .107), as s² is here the bounding box, larger than a
// segment's area — puts OKS = 0.5 at d = 2σ·s·√(2 ln 2) ≈ 0.12·s, about 3.5 pixels for a figure
// of 45 × 22 pixels in the default 64 × 48 input: one cell of a stride-4 heatmap.
const SkeletonSpec& stick_figure_skeleton();

// Mirrors the sample left-right: the image's columns reversed, x → W − x, and the values (x, y,
// visible) of the two joints of each flip pair swapped, so "left" still names the figure's left.
void flip_horizontal(PoseSample& sample, const SkeletonSpec& skeleton);

// Throws unless the sample is whole: an image (C, H, W) of float32, K = skeleton's joints in x, y
// and visible, finite positions, flags 0 or 1. `what` names the sample in the message.
void check_pose_sample(const PoseSample& sample, const SkeletonSpec& skeleton,
                       const std::string& what);

}  // namespace uwaga
