#pragma once
// Synthetic top-down person crops for pose estimation: one stick figure per grey image, its 15
// joints (data/pose/keypoints.h: stick_figure_skeleton) as the labels. A stand-in for COCO that is
// generated in microseconds, so a keypoint model can be trained and tested on a laptop.
//
// A figure is a kinematic chain built from the pelvis up and out, in units of its torso:
//   pelvis → neck (the torso, length 1, turned by the figure's rotation)
//   neck → head (0.38; the neck bends the head by an angle within `neck`)
//   neck ± 0.35 across the torso → shoulders;  pelvis ± 0.22 → hips
//   shoulder → elbow (0.55) → wrist (0.5);      hip → knee (0.72) → ankle (0.65)
// each limb's length times a random factor in [1 − limb_length_jitter, 1 + limb_length_jitter],
// the left and right limbs drawn separately. Joint angles are drawn uniformly within limits (in
// degrees), each measured from its parent segment:
//   shoulder: the upper arm from the torso's downward direction, positive away from the body
//   elbow:    the forearm from the upper arm, clockwise on screen for the left arm and
//             counter-clockwise for the right (a hanging forearm swings toward the body)
//   hip:      the thigh from the torso's downward direction, positive away from the body
//   knee:     the shin from the thigh, counter-clockwise on screen for the left leg and clockwise
//             for the right (a hanging shin swings outward)
//   neck:     the head from the torso's upward direction, positive clockwise on screen
// The figure faces the viewer: its left limbs are on the image's right when it stands upright.
// Then the whole figure is scaled so its extent (joints, head disk and strokes) fills a random
// fraction of the frame, and placed at random where it fits entirely.
//
// Drawing, in order: a flat background; distractor strokes (limb-like lines that are not part of
// the figure); the figure as antialiased strokes — torso, shoulder and hip lines and the head (a
// disk) at body_grey, the left limbs at left_grey, the right ones at right_grey, so left and right
// can be told apart even when the figure is turned; filled rectangles (occluders), each hiding
// exactly one joint (visible = 0) and no other; Gaussian pixel noise, clipped to [0, 1].
//
// sample(i) depends only on (config, seed, i): each image has its own generator, seeded from the
// two by derive_seed (data/images/augment.h), so images are made on the fly, in any order, on any thread.
// A training and a validation set are two StickFigures with different seeds.
//
// Do not mirror these images (flip_horizontal, or ViTPose's flip test): here the grey level is
// what tells left from right, so a mirror image with its flip pairs swapped labels the bright
// limbs "right", against every other image. (A photo of a person stays consistent when mirrored;
// nor is augmentation needed here, as every image is new.)
#include <cstdint>
#include <vector>

#include "data/pose/keypoints.h"

namespace uwaga {

struct AngleRange {
  double min = 0, max = 0;  // degrees, −180 < min ≤ max < 180
};

struct StickFigureConfig {
  std::int64_t height = 64, width = 48;  // the input size H × W (ViTPose's 256 × 192 aspect)
  // The figure's extent fills this fraction of the frame along its tighter side.
  double min_fill = 0.65, max_fill = 0.9;
  double max_rotation_deg = 30;  // the whole figure turned by up to this either way
  double limb_length_jitter = 0.15;
  AngleRange neck{-30, 30}, shoulder{-20, 170}, elbow{0, 150}, hip{-15, 70}, knee{0, 120};

  // Grey levels in [0, 1]. left_grey and right_grey must differ by at least 0.2.
  float body_grey = 0.7f, left_grey = 1.0f, right_grey = 0.4f;
  float max_background_grey = 0.2f;  // the background is uniform in [0, this]
  double noise_std = 0.04;           // per pixel, added last

  std::int64_t max_distractors = 3;  // 0 .. this many distractor strokes per image, uniformly
  // With this probability an image has occluders; then 1 .. max_occluded_joints of them, each
  // hiding one joint. (Where no rectangle fits around a joint alone, fewer are drawn.)
  double occlusion_probability = 0.5;
  std::int64_t max_occluded_joints = 2;
};

// Throws unless every setting is in range: sizes 16 .. 4096, 0 < min_fill ≤ max_fill ≤ 1, angle
// ranges inside (−180, 180), grey levels in [0, 1] with left and right 0.2 apart, ...
void check_stick_figure_config(const StickFigureConfig& config);

// Everything drawn in one image, before it is drawn. Coordinates as in data/pose/keypoints.h.
struct StickFigureScene {
  struct Stroke {
    float x0, y0, x1, y1;
    float grey;
  };
  struct Rect {  // [x0, x1] × [y0, y1]
    float x0, y0, x1, y1;
    float grey;
  };
  std::vector<float> x, y;             // (K,) joint positions
  std::vector<std::uint8_t> visible;   // (K,) 0 where an occluder covers the joint
  float stroke_radius = 0;             // half the width of every stroke, pixels
  float head_radius = 0;
  float background = 0;
  std::vector<Stroke> distractors;
  std::vector<Rect> occluders;
  std::uint64_t noise_seed = 0;
};

class StickFigures {
 public:
  StickFigures(StickFigureConfig config, std::int64_t count, std::uint64_t seed);

  std::int64_t size() const { return count_; }
  const StickFigureConfig& config() const { return config_; }
  const SkeletonSpec& skeleton() const { return stick_figure_skeleton(); }

  // Image i: a (1, H, W) grey image, its 15 joints, area = the joints' bounding box, torso = the
  // distance from neck to pelvis.
  PoseSample sample(std::int64_t i) const;
  // What sample(i) draws (its geometry), for tests and for inspection.
  StickFigureScene scene(std::int64_t i) const;
  // Draws a scene: sample(i) = render(scene(i)).
  PoseSample render(const StickFigureScene& scene) const;

 private:
  StickFigureConfig config_;
  std::int64_t count_;
  std::uint64_t seed_;
};

}  // namespace uwaga
