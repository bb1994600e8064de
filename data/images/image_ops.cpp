#include "data/images/image_ops.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace uwaga {
namespace {

constexpr double kPi = 3.14159265358979323846;

double radians(double degrees) { return degrees * kPi / 180.0; }

// A float that lies in [0, 255] after clamping, truncated to a byte (torch's .to(uint8)).
std::uint8_t clamp_truncate(float v) {
  if (!(v > 0.0f)) return 0;  // NaN too
  if (v >= 255.0f) return 255;
  return static_cast<std::uint8_t>(v);
}

// Rounded half to even, then clamped to a byte (torch.round, then .to(uint8)).
std::uint8_t round_to_byte(float v) {
  const float r = std::nearbyint(v);
  if (!(r > 0.0f)) return 0;
  if (r >= 255.0f) return 255;
  return static_cast<std::uint8_t>(r);
}

void check_image(const ByteImage& image, const char* op) {
  if (image.channels < 1 || image.height < 1 || image.width < 1 ||
      static_cast<std::int64_t>(image.pixels.size()) !=
          image.channels * image.height * image.width)
    fail(op, ": the image must be (C, H, W) with C, H, W >= 1 and C·H·W pixels; got C ",
         image.channels, ", H ", image.height, ", W ", image.width, " and ", image.pixels.size(),
         " pixels");
}

// Each pixel through f(value) -> byte.
template <class F>
ByteImage map_pixels(const ByteImage& image, F f) {
  ByteImage out = image;
  for (auto& v : out.pixels) v = f(v);
  return out;
}

// Every pixel blended with the same-position pixel of `other` (same shape).
ByteImage blend_images(const ByteImage& image, const ByteImage& other, double ratio) {
  ByteImage out = image;
  for (std::size_t i = 0; i < out.pixels.size(); ++i)
    out.pixels[i] = blend_pixel(image.pixels[i], other.pixels[i], ratio);
  return out;
}

}  // namespace

ByteImage::ByteImage(std::int64_t C, std::int64_t H, std::int64_t W, std::uint8_t value)
    : channels(C), height(H), width(W), pixels(static_cast<std::size_t>(C * H * W), value) {}

ByteImage::ByteImage(std::int64_t C, std::int64_t H, std::int64_t W, const std::uint8_t* data)
    : channels(C), height(H), width(W), pixels(data, data + C * H * W) {}

// --- geometry -----------------------------------------------------------------------------------

AffineMatrix inverse_affine_matrix(double cx, double cy, double angle, double tx, double ty,
                                   double scale, double shear_x_deg, double shear_y_deg) {
  // The forward map is  M = T · C · R · S_y · S_x · C⁻¹  (translate, centre, rotate, shear) with
  // R·S = [[a, b], [c, d]] of determinant 1, so (R·S)⁻¹ = [[d, −b], [−c, a]]; the inverse map is
  // C · (R·S)⁻¹ / scale · C⁻¹ · T⁻¹, built in that order below (torchvision's derivation).
  const double rot = radians(angle), sx = radians(shear_x_deg), sy = radians(shear_y_deg);
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  AffineMatrix m = {d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0};
  m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty);
  m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty);
  m[2] += cx;
  m[5] += cy;
  return m;
}

ByteImage affine_nearest(const ByteImage& image, const AffineMatrix& m) {
  check_image(image, "affine_nearest");
  const std::int64_t C = image.channels, H = image.height, W = image.width;
  ByteImage out(C, H, W);
  // As torchvision's _gen_affine_grid and grid_sample, in float32: the output pixel (x, y) has
  // the centred coordinates (x − W/2 + 1/2, y − H/2 + 1/2); the inverse map, divided by (W/2,
  // H/2), gives a normalised position g ∈ [−1, 1] across the image; align_corners = False puts
  // the input column at ((g + 1)·W − 1) / 2, and nearest rounds it half to even.
  const float hw = 0.5f * static_cast<float>(W), hh = 0.5f * static_cast<float>(H);
  const float r00 = static_cast<float>(m[0]) / hw, r10 = static_cast<float>(m[1]) / hw,
              r20 = static_cast<float>(m[2]) / hw;
  const float r01 = static_cast<float>(m[3]) / hh, r11 = static_cast<float>(m[4]) / hh,
              r21 = static_cast<float>(m[5]) / hh;
  for (std::int64_t y = 0; y < H; ++y) {
    const float yc = static_cast<float>(y) - hh + 0.5f;
    for (std::int64_t x = 0; x < W; ++x) {
      const float xc = static_cast<float>(x) - hw + 0.5f;
      const float gx = xc * r00 + yc * r10 + r20;
      const float gy = xc * r01 + yc * r11 + r21;
      const float ix = std::nearbyint(((gx + 1.0f) * static_cast<float>(W) - 1.0f) / 2.0f);
      const float iy = std::nearbyint(((gy + 1.0f) * static_cast<float>(H) - 1.0f) / 2.0f);
      if (!(ix >= 0.0f && ix < static_cast<float>(W) && iy >= 0.0f &&
            iy < static_cast<float>(H)))
        continue;  // outside: stays 0
      const auto sx = static_cast<std::int64_t>(ix), sy = static_cast<std::int64_t>(iy);
      for (std::int64_t c = 0; c < C; ++c) out.at(c, y, x) = image.at(c, sy, sx);
    }
  }
  return out;
}

ByteImage shear_x(const ByteImage& image, double s) {
  // About the top-left corner: centre (0, 0) in pixels is (−W/2, −H/2) from the image centre.
  const double deg = std::atan(s) * 180.0 / kPi;
  return affine_nearest(image, inverse_affine_matrix(-0.5 * image.width, -0.5 * image.height, 0,
                                                     0, 0, 1, deg, 0));
}

ByteImage shear_y(const ByteImage& image, double s) {
  const double deg = std::atan(s) * 180.0 / kPi;
  return affine_nearest(image, inverse_affine_matrix(-0.5 * image.width, -0.5 * image.height, 0,
                                                     0, 0, 1, 0, deg));
}

ByteImage translate_x(const ByteImage& image, double pixels) {
  return affine_nearest(image,
                        inverse_affine_matrix(0, 0, 0, std::trunc(pixels), 0, 1, 0, 0));
}

ByteImage translate_y(const ByteImage& image, double pixels) {
  return affine_nearest(image,
                        inverse_affine_matrix(0, 0, 0, 0, std::trunc(pixels), 1, 0, 0));
}

ByteImage rotate(const ByteImage& image, double degrees) {
  // Counter-clockwise on screen, where y runs down: torchvision's rotate passes −angle.
  return affine_nearest(image, inverse_affine_matrix(0, 0, -degrees, 0, 0, 1, 0, 0));
}

ByteImage resized_crop(const ByteImage& image, std::int64_t top, std::int64_t left,
                       std::int64_t h, std::int64_t w, std::int64_t out_h, std::int64_t out_w) {
  check_image(image, "resized_crop");
  if (h < 1 || w < 1 || top < 0 || left < 0 || top + h > image.height ||
      left + w > image.width || out_h < 1 || out_w < 1)
    fail("resized_crop: the crop (top ", top, ", left ", left, ", ", h, "x", w,
         ") must lie inside the ", image.height, "x", image.width, " image and the output (",
         out_h, "x", out_w, ") be non-empty");
  ByteImage out(image.channels, out_h, out_w);
  // PyTorch's upsample_bilinear2d, align_corners = False, in float32: output index o samples the
  // input at (o + 1/2)·(in/out) − 1/2, clamped at 0; the two neighbours i0 = floor, i1 = min(i0 +
  // 1, in − 1) weigh 1 − λ and λ.
  struct Tap {
    std::int64_t i0, i1;
    float l0, l1;
  };
  auto taps = [](std::int64_t in, std::int64_t out_n) {
    std::vector<Tap> t(static_cast<std::size_t>(out_n));
    const float scale = static_cast<float>(in) / static_cast<float>(out_n);
    for (std::int64_t o = 0; o < out_n; ++o) {
      const float src = std::max(0.0f, scale * (static_cast<float>(o) + 0.5f) - 0.5f);
      const auto i0 = std::min(static_cast<std::int64_t>(src), in - 1);
      const std::int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
      const float l1 = src - static_cast<float>(i0);
      t[static_cast<std::size_t>(o)] = {i0, i1, 1.0f - l1, l1};
    }
    return t;
  };
  const std::vector<Tap> ty = taps(h, out_h), tx = taps(w, out_w);
  for (std::int64_t c = 0; c < image.channels; ++c)
    for (std::int64_t y = 0; y < out_h; ++y) {
      const Tap& a = ty[static_cast<std::size_t>(y)];
      for (std::int64_t x = 0; x < out_w; ++x) {
        const Tap& b = tx[static_cast<std::size_t>(x)];
        auto px = [&](std::int64_t yy, std::int64_t xx) {
          return static_cast<float>(image.at(c, top + yy, left + xx));
        };
        const float v = a.l0 * (b.l0 * px(a.i0, b.i0) + b.l1 * px(a.i0, b.i1)) +
                        a.l1 * (b.l0 * px(a.i1, b.i0) + b.l1 * px(a.i1, b.i1));
        out.at(c, y, x) = round_to_byte(v);
      }
    }
  return out;
}

// --- colour -------------------------------------------------------------------------------------

std::uint8_t blend_pixel(float a, float b, double ratio) {
  // torchvision: (ratio * img1 + (1.0 - ratio) * img2).clamp(0, 255).to(uint8): both weights
  // computed in double and rounded to float32, each product rounded to float32 before the sum.
  const float r = static_cast<float>(ratio), other = static_cast<float>(1.0 - ratio);
  volatile float p = r * a;  // volatile: no fused multiply-add, as torch's two kernels
  volatile float q = other * b;
  return clamp_truncate(p + q);
}

ByteImage grayscale(const ByteImage& image) {
  check_image(image, "grayscale");
  if (image.channels == 1) return image;
  if (image.channels != 3) fail("grayscale: expected 1 or 3 channels, got ", image.channels);
  ByteImage out(1, image.height, image.width);
  const std::int64_t n = image.height * image.width;
  const std::uint8_t *r = image.plane(0), *g = image.plane(1), *b = image.plane(2);
  for (std::int64_t i = 0; i < n; ++i) {
    volatile float vr = 0.2989f * r[i], vg = 0.587f * g[i], vb = 0.114f * b[i];
    out.pixels[static_cast<std::size_t>(i)] = clamp_truncate(vr + vg + vb);
  }
  return out;
}

ByteImage adjust_brightness(const ByteImage& image, double factor) {
  check_image(image, "adjust_brightness");
  return map_pixels(image, [factor](std::uint8_t v) { return blend_pixel(v, 0.0f, factor); });
}

ByteImage adjust_saturation(const ByteImage& image, double factor) {
  check_image(image, "adjust_saturation");
  if (image.channels == 1) return image;  // a grey image has no colour to change
  const ByteImage grey = grayscale(image);
  ByteImage grey3(3, image.height, image.width);
  for (std::int64_t c = 0; c < 3; ++c)
    std::copy(grey.pixels.begin(), grey.pixels.end(), grey3.plane(c));
  return blend_images(image, grey3, factor);
}

ByteImage adjust_contrast(const ByteImage& image, double factor) {
  check_image(image, "adjust_contrast");
  const ByteImage grey = grayscale(image);
  double sum = 0;  // exact: at most 255 · 2^53 / 255 pixels
  for (std::uint8_t v : grey.pixels) sum += v;
  const float mean = static_cast<float>(sum / static_cast<double>(grey.pixels.size()));
  return map_pixels(image, [&](std::uint8_t v) { return blend_pixel(v, mean, factor); });
}

ByteImage adjust_sharpness(const ByteImage& image, double factor) {
  check_image(image, "adjust_sharpness");
  const std::int64_t H = image.height, W = image.width;
  if (H <= 2 || W <= 2) return image;
  ByteImage smooth = image;  // the border keeps the image's own pixels
  const float w1 = 1.0f / 13.0f, w5 = 5.0f / 13.0f;
  for (std::int64_t c = 0; c < image.channels; ++c)
    for (std::int64_t y = 1; y < H - 1; ++y)
      for (std::int64_t x = 1; x < W - 1; ++x) {
        float s = 0;
        for (std::int64_t dy = -1; dy <= 1; ++dy)
          for (std::int64_t dx = -1; dx <= 1; ++dx)
            s += (dy == 0 && dx == 0 ? w5 : w1) * image.at(c, y + dy, x + dx);
        smooth.at(c, y, x) = round_to_byte(s);
      }
  return blend_images(image, smooth, factor);
}

ByteImage posterize(const ByteImage& image, int bits) {
  check_image(image, "posterize");
  if (bits < 0 || bits > 8) fail("posterize: bits must be from 0 to 8, got ", bits);
  const auto mask = static_cast<std::uint8_t>(0xFF00u >> bits);  // the top `bits` bits
  return map_pixels(image, [mask](std::uint8_t v) { return static_cast<std::uint8_t>(v & mask); });
}

ByteImage solarize(const ByteImage& image, double threshold) {
  check_image(image, "solarize");
  return map_pixels(image, [threshold](std::uint8_t v) {
    return static_cast<std::uint8_t>(v >= threshold ? 255 - v : v);
  });
}

ByteImage autocontrast(const ByteImage& image) {
  check_image(image, "autocontrast");
  ByteImage out = image;
  const std::int64_t n = image.height * image.width;
  for (std::int64_t c = 0; c < image.channels; ++c) {
    const std::uint8_t* p = image.plane(c);
    const auto [lo_it, hi_it] = std::minmax_element(p, p + n);
    float lo = *lo_it, scale = 1.0f;
    // As torch evaluates 255 / (max − min) for a tensor: the reciprocal, times 255.
    if (*hi_it > *lo_it) scale = (1.0f / (static_cast<float>(*hi_it) - lo)) * 255.0f;
    else lo = 0.0f;  // a flat channel stays as it is
    std::uint8_t* q = out.plane(c);
    for (std::int64_t i = 0; i < n; ++i) q[i] = clamp_truncate((p[i] - lo) * scale);
  }
  return out;
}

ByteImage equalize(const ByteImage& image) {
  check_image(image, "equalize");
  ByteImage out = image;
  const std::int64_t n = image.height * image.width;
  for (std::int64_t c = 0; c < image.channels; ++c) {
    const std::uint8_t* p = image.plane(c);
    std::int64_t hist[256] = {};
    for (std::int64_t i = 0; i < n; ++i) ++hist[p[i]];
    // step = (pixels outside the last occupied bin) / 255, floored; the value v maps to
    // (pixels below v + step/2) / step: the cumulative histogram spread over 0..255.
    std::int64_t last = 255;
    while (hist[last] == 0) --last;
    const std::int64_t step = (n - hist[last]) / 255;
    if (step == 0) continue;  // (nearly) one value: unchanged
    std::uint8_t lut[256];
    std::int64_t below = 0;
    for (int v = 0; v < 256; ++v) {
      lut[v] = static_cast<std::uint8_t>(std::min<std::int64_t>(255, (below + step / 2) / step));
      below += hist[v];
    }
    std::uint8_t* q = out.plane(c);
    for (std::int64_t i = 0; i < n; ++i) q[i] = lut[p[i]];
  }
  return out;
}

ByteImage invert(const ByteImage& image) {
  check_image(image, "invert");
  return map_pixels(image, [](std::uint8_t v) { return static_cast<std::uint8_t>(255 - v); });
}

ByteImage flip_horizontal(const ByteImage& image) {
  check_image(image, "flip_horizontal");
  ByteImage out = image;
  for (std::int64_t c = 0; c < image.channels; ++c)
    for (std::int64_t y = 0; y < image.height; ++y)
      for (std::int64_t x = 0; x < image.width; ++x)
        out.at(c, y, x) = image.at(c, y, image.width - 1 - x);
  return out;
}

}  // namespace uwaga
