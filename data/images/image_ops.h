#pragma once
// The image operations of RandAugment, TrivialAugment and random resized crops, on byte images
// (C, H, W) with C = 1 (grey) or 3 (RGB). Each follows torchvision 0.14's functional ops on uint8
// tensors (torchvision/transforms/functional_tensor.py), so a recipe written for torchvision
// means the same here; tests/data/test_image_ops.cpp compares every op with torchvision's pixels
// (tests/golden/make_image_ops_golden.py).
//
// Arithmetic is float32 as torchvision's, and a float result becomes a byte as there: blends
// truncate (x.clamp(0, 255).to(uint8)); filters and resizes round half to even first. Geometric
// ops sample the nearest pixel (grid_sample, align_corners = False) and fill what falls outside
// the image with 0.
#include <array>
#include <cstdint>
#include <vector>

namespace uwaga {

struct ByteImage {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::vector<std::uint8_t> pixels;  // (C, H, W), row by row within each channel

  ByteImage() = default;
  ByteImage(std::int64_t C, std::int64_t H, std::int64_t W, std::uint8_t value = 0);
  ByteImage(std::int64_t C, std::int64_t H, std::int64_t W, const std::uint8_t* data);
  std::uint8_t& at(std::int64_t c, std::int64_t y, std::int64_t x) {
    return pixels[static_cast<std::size_t>((c * height + y) * width + x)];
  }
  std::uint8_t at(std::int64_t c, std::int64_t y, std::int64_t x) const {
    return pixels[static_cast<std::size_t>((c * height + y) * width + x)];
  }
  std::uint8_t* plane(std::int64_t c) { return pixels.data() + c * height * width; }
  const std::uint8_t* plane(std::int64_t c) const { return pixels.data() + c * height * width; }
};

// --- geometry -----------------------------------------------------------------------------------

// An inverse affine map in centred coordinates: the output pixel whose centre is (x, y) relative
// to the image centre samples the input at (m[0] x + m[1] y + m[2], m[3] x + m[4] y + m[5]),
// also relative to the centre. torchvision's _get_inverse_affine_matrix: angle counter-clockwise
// in degrees, shear in degrees, `center` relative to the image centre.
using AffineMatrix = std::array<double, 6>;
AffineMatrix inverse_affine_matrix(double center_x, double center_y, double angle_degrees,
                                   double translate_x, double translate_y, double scale,
                                   double shear_x_degrees, double shear_y_degrees);

// Nearest-neighbour resampling through an inverse map; outside the image: 0.
ByteImage affine_nearest(const ByteImage& image, const AffineMatrix& inverse);

// torchvision's ShearX / ShearY (x' = x + s·y about the top-left corner; y' = y + s·x), with
// s = tan(shear angle) = the magnitude; TranslateX / TranslateY by whole pixels (the magnitude
// truncated toward zero); Rotate counter-clockwise by `degrees` about the centre.
ByteImage shear_x(const ByteImage& image, double s);
ByteImage shear_y(const ByteImage& image, double s);
ByteImage translate_x(const ByteImage& image, double pixels);
ByteImage translate_y(const ByteImage& image, double pixels);
ByteImage rotate(const ByteImage& image, double degrees);

// Rows [top, top + h) and columns [left, left + w) (inside the image) resized to out_h × out_w
// by bilinear interpolation (align_corners = False, no antialiasing): torchvision's
// resized_crop, the second half of RandomResizedCrop.
ByteImage resized_crop(const ByteImage& image, std::int64_t top, std::int64_t left,
                       std::int64_t h, std::int64_t w, std::int64_t out_h, std::int64_t out_w);

// --- colour -------------------------------------------------------------------------------------

// ratio·a + (1 − ratio)·b, clamped to [0, 255] and truncated: torchvision's _blend.
std::uint8_t blend_pixel(float a, float b, double ratio);

// Grey value of an RGB pixel as torchvision's rgb_to_grayscale: (0.2989 r + 0.587 g + 0.114 b)
// truncated. A grey image is its own grey version.
ByteImage grayscale(const ByteImage& image);

ByteImage adjust_brightness(const ByteImage& image, double factor);  // blend with black
ByteImage adjust_saturation(const ByteImage& image, double factor);  // with its grey (RGB only)
ByteImage adjust_contrast(const ByteImage& image, double factor);    // with its mean grey
// Blend with a 3×3 smoothing ([1 1 1; 1 5 1; 1 1 1] / 13) of the interior; the one-pixel border
// keeps its values. Images of 2 pixels or fewer across are returned unchanged.
ByteImage adjust_sharpness(const ByteImage& image, double factor);
ByteImage posterize(const ByteImage& image, int bits);          // keep the top `bits` bits
ByteImage solarize(const ByteImage& image, double threshold);   // v >= threshold → 255 − v
ByteImage autocontrast(const ByteImage& image);  // each channel stretched to min 0, max 255
ByteImage equalize(const ByteImage& image);      // each channel's histogram equalised
ByteImage invert(const ByteImage& image);        // 255 − v

// Mirror left-right.
ByteImage flip_horizontal(const ByteImage& image);

}  // namespace uwaga
