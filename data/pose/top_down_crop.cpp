#include "data/pose/top_down_crop.h"

#include <cmath>
#include <numbers>

#include "core/error.h"

namespace uwaga {

Affine2D Affine2D::inverse() const {
  // [a b; d e]⁻¹ = [e −b; −d a] / det, and the translation is undone after it.
  const double det = a * e - b * d;
  if (!std::isfinite(det) || std::abs(det) < 1e-12)
    fail("Affine2D::inverse: the map is singular (determinant ", det, ")");
  Affine2D inv;
  inv.a = e / det, inv.b = -b / det;
  inv.d = -d / det, inv.e = a / det;
  inv.c = -(inv.a * c + inv.b * f);
  inv.f = -(inv.d * c + inv.e * f);
  return inv;
}

CropWindow crop_window(double x, double y, double w, double h, std::int64_t height,
                       std::int64_t width, double padding) {
  check_size_in_range("crop_window", "height", height, 1 << 16);
  check_size_in_range("crop_window", "width", width, 1 << 16);
  if (!std::isfinite(x) || !std::isfinite(y) || !(w > 0) || !(h > 0) || !std::isfinite(w) ||
      !std::isfinite(h))
    fail("crop_window: the box (", x, ", ", y, ", ", w, ", ", h,
         ") should be finite with a positive width and height");
  if (!(padding > 0) || !std::isfinite(padding))
    fail("crop_window: padding ", padding, " should be positive");
  const double center_x = x + w / 2, center_y = y + h / 2;
  const double aspect = static_cast<double>(width) / static_cast<double>(height);
  if (w > aspect * h) h = w / aspect;
  else w = h * aspect;
  return {center_x, center_y, w * padding, h * padding};
}

Affine2D crop_transform(const CropWindow& window, std::int64_t height, std::int64_t width,
                        double rotation_deg, double scale) {
  if (!(window.width > 0) || !(window.height > 0) || !std::isfinite(window.width) ||
      !std::isfinite(window.height) || !std::isfinite(window.center_x) ||
      !std::isfinite(window.center_y))
    fail("crop_transform: the window (centre ", window.center_x, ", ", window.center_y, "; ",
         window.width, " x ", window.height, ") should be finite and not empty");
  if (!(scale > 0) || !std::isfinite(scale) || !std::isfinite(rotation_deg))
    fail("crop_transform: scale ", scale, " and rotation ", rotation_deg,
         " should be finite, scale > 0");
  // input = R·S·(p − centre) + (W/2, H/2), S = diag(W / window width, H / window height) / scale,
  // R = [cos −sin; sin cos], which turns clockwise on screen because y points down.
  const double sx = static_cast<double>(width) / (window.width * scale);
  const double sy = static_cast<double>(height) / (window.height * scale);
  const double r = rotation_deg * std::numbers::pi / 180;
  const double cs = std::cos(r), sn = std::sin(r);
  Affine2D t;
  t.a = cs * sx, t.b = -sn * sy;
  t.d = sn * sx, t.e = cs * sy;
  t.c = static_cast<double>(width) / 2 - (t.a * window.center_x + t.b * window.center_y);
  t.f = static_cast<double>(height) / 2 - (t.d * window.center_x + t.e * window.center_y);
  return t;
}

Tensor warp_affine(const ImageDataset& photo, const Affine2D& photo_to_input, std::int64_t height,
                   std::int64_t width) {
  check_size_in_range("warp_affine", "height", height, 1 << 16);
  check_size_in_range("warp_affine", "width", width, 1 << 16);
  if (photo.count < 1 || photo.channels < 1 || photo.height < 1 || photo.width < 1 ||
      static_cast<std::int64_t>(photo.pixels.size()) < photo.image_size())
    fail("warp_affine: the photo holds no image (", photo.count, " images of ", photo.channels,
         " x ", photo.height, " x ", photo.width, ", ", photo.pixels.size(), " bytes)");
  const Affine2D back = photo_to_input.inverse();
  const std::int64_t C = photo.channels, PH = photo.height, PW = photo.width;
  Tensor out = Tensor::empty({C, height, width});
  float* dst = out.data<float>();  // (C, height, width)
  const std::uint8_t* src = photo.image(0);  // (C, PH, PW)
  for (std::int64_t i = 0; i < height; ++i) {
    for (std::int64_t j = 0; j < width; ++j) {
      const double px = static_cast<double>(j) + 0.5, py = static_cast<double>(i) + 0.5;
      // The source point in pixel-index units (pixel (r, s) at (s, r)): the four pixels around it
      // are rows r0, r0 + 1 and columns s0, s0 + 1.
      const double u = back.x(px, py) - 0.5, v = back.y(px, py) - 0.5;
      const double fs = std::floor(u), fr = std::floor(v);
      const double wx = u - fs, wy = v - fr;
      std::int64_t s0 = 0, r0 = 0;
      // Far outside the photo: all four neighbours are, so the value is 0 (and the casts below
      // never see a huge double).
      const bool far = !(fs > -2 && fs < static_cast<double>(PW) && fr > -2 &&
                         fr < static_cast<double>(PH));
      if (!far) s0 = static_cast<std::int64_t>(fs), r0 = static_cast<std::int64_t>(fr);
      const double w[4] = {(1 - wx) * (1 - wy), wx * (1 - wy), (1 - wx) * wy, wx * wy};
      const std::int64_t rs[4] = {r0, r0, r0 + 1, r0 + 1}, ss[4] = {s0, s0 + 1, s0, s0 + 1};
      for (std::int64_t c = 0; c < C; ++c) {
        double value = 0;
        if (!far)
          for (int k = 0; k < 4; ++k)
            if (rs[k] >= 0 && rs[k] < PH && ss[k] >= 0 && ss[k] < PW)
              value += w[k] * src[(c * PH + rs[k]) * PW + ss[k]];
        dst[(c * height + i) * width + j] = static_cast<float>(value / 255);
      }
    }
  }
  return out;
}

}  // namespace uwaga
