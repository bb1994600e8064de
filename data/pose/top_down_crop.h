#pragma once
// Top-down crops: one person's box cut out of a photo and warped to the model's input size, as
// ViTPose does it (mmpose's bbox_xywh2cs, get_affine_transform and cv2.warpAffine):
//   1. the window: centred on the box, the shorter side grown until the window has the input's
//      aspect W/H (so the person is not stretched), then both sides times `padding` (1.25), so
//      the whole person and some context fit;
//   2. the affine map T from photo to input coordinates: window centre → input centre (W/2, H/2),
//      window size → W × H, optionally turned about the centre (augmentation);
//   3. every input pixel sampled from the photo at T⁻¹ of its centre, bilinearly, zero outside.
// Coordinates are continuous in both images (data/pose/keypoints.h): a pixel's centre is at +0.5, so
// joint positions map through the same T as the pixels, with no half-pixel shifts anywhere.
#include <cstdint>

#include "core/tensor.h"
#include "data/images/image_dataset.h"

namespace uwaga {

// (x', y') = (a·x + b·y + c, d·x + e·y + f)
struct Affine2D {
  double a = 1, b = 0, c = 0;
  double d = 0, e = 1, f = 0;

  double x(double px, double py) const { return a * px + b * py + c; }
  double y(double px, double py) const { return d * px + e * py + f; }
  Affine2D inverse() const;  // throws when the map is singular
};

// The region of the photo shown in the input (before any rotation), in photo pixels.
struct CropWindow {
  double center_x = 0, center_y = 0;
  double width = 0, height = 0;
};

// Step 1 for the box (x, y, w, h) — COCO's bbox, top-left corner and size — and an input of
// height × width. Throws unless w, h > 0 and padding > 0, all finite.
CropWindow crop_window(double x, double y, double w, double h, std::int64_t height,
                       std::int64_t width, double padding);

// Step 2: T for the window and an input of height × width, the person turned by rotation_deg
// (clockwise on screen) and the window grown by `scale` (> 1 zooms out) about its centre.
Affine2D crop_transform(const CropWindow& window, std::int64_t height, std::int64_t width,
                        double rotation_deg = 0, double scale = 1);

// Step 3: the (C, height, width) float32 input in [0, 1] from image 0 of `photo` (C, H, W bytes):
//   input(c, i, j) = bilinear(photo_c, T⁻¹(j + 0.5, i + 0.5)) / 255,
// where bilinear weighs the four pixels around the point (pixel (r, s) sits at (s + 0.5, r + 0.5))
// and a pixel outside the photo counts as 0.
Tensor warp_affine(const ImageDataset& photo, const Affine2D& photo_to_input, std::int64_t height,
                   std::int64_t width);

}  // namespace uwaga
