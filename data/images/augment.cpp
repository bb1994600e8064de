#include "data/images/augment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "data/images/image_ops.h"

namespace uwaga {
namespace {

std::uint64_t mix64(std::uint64_t z) {  // the splitmix64 finaliser
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A uniform draw in [lo, hi).
double uniform_in(Generator& gen, double lo, double hi) { return lo + (hi - lo) * gen.uniform(); }

// A uniform integer in [lo, hi] (hi >= lo).
std::int64_t integer_in(Generator& gen, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(gen.below(static_cast<std::uint64_t>(hi - lo + 1)));
}

// The shift and flip of transform_image on bytes: out(c, y, x) = in(c, y + dy, x' + dx),
// x' = flip ? W − 1 − x : x, 0 outside.
ByteImage shift_flip(const ByteImage& in, const ImageTransform& t) {
  if (t.dy == 0 && t.dx == 0 && !t.flip) return in;
  ByteImage out(in.channels, in.height, in.width);
  for (std::int64_t c = 0; c < in.channels; ++c)
    for (std::int64_t y = 0; y < in.height; ++y) {
      const std::int64_t sy = y + t.dy;
      if (sy < 0 || sy >= in.height) continue;
      for (std::int64_t x = 0; x < in.width; ++x) {
        const std::int64_t sx = (t.flip ? in.width - 1 - x : x) + t.dx;
        if (sx >= 0 && sx < in.width) out.at(c, y, x) = in.at(c, sy, sx);
      }
    }
  return out;
}

}  // namespace

void AugmentOptions::validate() const {
  if (max_shift < 0) fail("augment: max_shift must be >= 0, got ", max_shift);
  if (!(crop_scale >= 0 && crop_scale <= 1))
    fail("augment: the resized crop's smallest area fraction must be in [0, 1] (0: off), got ",
         crop_scale);
  if (!(erase_probability >= 0 && erase_probability <= 1))
    fail("augment: the erasing probability must be in [0, 1], got ", erase_probability);
  if (policy == AugmentPolicy::rand_augment) rand_augment.validate();
}

std::string AugmentOptions::describe() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  if (crop_scale > 0) add("resized crop " + num(crop_scale) + "-1");
  if (policy == AugmentPolicy::auto_augment) add("autoaugment");
  if (max_shift > 0) add("shift " + std::to_string(max_shift));
  if (horizontal_flip) add("flip");
  if (policy == AugmentPolicy::rand_augment)
    add("randaugment " + std::to_string(rand_augment.ops) + "x" +
        std::to_string(rand_augment.magnitude));
  if (policy == AugmentPolicy::trivial_augment_wide) add("trivialaugment");
  if (erase_probability > 0) add("erase " + num(erase_probability));
  return s.empty() ? "none" : s;
}

ImageBox draw_resized_crop(std::int64_t H, std::int64_t W, double scale_min, Generator& gen) {
  const double area = static_cast<double>(H * W);
  const double log_lo = std::log(3.0 / 4.0), log_hi = std::log(4.0 / 3.0);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * uniform_in(gen, scale_min, 1.0);
    const double aspect = std::exp(uniform_in(gen, log_lo, log_hi));
    const auto w = static_cast<std::int64_t>(std::nearbyint(std::sqrt(target * aspect)));
    const auto h = static_cast<std::int64_t>(std::nearbyint(std::sqrt(target / aspect)));
    if (0 < w && w <= W && 0 < h && h <= H)
      return {integer_in(gen, 0, H - h), integer_in(gen, 0, W - w), h, w};
  }
  // The fallback: the centre crop of the whole image at the nearest allowed aspect ratio.
  const double in_ratio = static_cast<double>(W) / static_cast<double>(H);
  std::int64_t w = W, h = H;
  if (in_ratio < 3.0 / 4.0) h = static_cast<std::int64_t>(std::nearbyint(W / (3.0 / 4.0)));
  else if (in_ratio > 4.0 / 3.0) w = static_cast<std::int64_t>(std::nearbyint(H * (4.0 / 3.0)));
  return {(H - h) / 2, (W - w) / 2, h, w};
}

ImageBox draw_erase_box(std::int64_t H, std::int64_t W, Generator& gen) {
  const double area = static_cast<double>(H * W);
  const double log_lo = std::log(0.3), log_hi = std::log(3.3);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * uniform_in(gen, 0.02, 0.33);
    const double aspect = std::exp(uniform_in(gen, log_lo, log_hi));
    const auto h = static_cast<std::int64_t>(std::nearbyint(std::sqrt(target * aspect)));
    const auto w = static_cast<std::int64_t>(std::nearbyint(std::sqrt(target / aspect)));
    if (!(h < H && w < W)) continue;
    return {integer_in(gen, 0, H - h), integer_in(gen, 0, W - w), h, w};
  }
  return {};
}

void augment_image(const std::uint8_t* src, std::int64_t C, std::int64_t H, std::int64_t W,
                   const AugmentOptions& options, Generator& gen, const float* lut, float* dst) {
  // The draws in a fixed order, whatever is switched on: shift and flip, crop, policy, erase.
  const ImageTransform t = draw_transform(options, gen);
  ByteImage img(C, H, W, src);
  if (options.crop_scale > 0) {
    const ImageBox box = draw_resized_crop(H, W, options.crop_scale, gen);
    img = resized_crop(img, box.top, box.left, box.height, box.width, H, W);
  }
  // AutoAugment sees the image before the zero padding of the shift, as in its paper's pipeline:
  // Equalize and AutoContrast would otherwise count the padding's black.
  if (options.policy == AugmentPolicy::auto_augment) img = auto_augment_cifar10(img, gen);
  img = shift_flip(img, t);
  if (options.policy == AugmentPolicy::rand_augment)
    img = rand_augment(img, options.rand_augment, gen);
  else if (options.policy == AugmentPolicy::trivial_augment_wide)
    img = trivial_augment_wide(img, gen);
  for (std::int64_t c = 0; c < C; ++c) {
    const float* table = lut + c * 256;
    const std::uint8_t* p = img.plane(c);
    float* out = dst + c * H * W;
    for (std::int64_t i = 0; i < H * W; ++i) out[i] = table[p[i]];
  }
  if (options.erase_probability > 0 && gen.uniform() < options.erase_probability) {
    const ImageBox box = draw_erase_box(H, W, gen);
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t y = box.top; y < box.top + box.height; ++y)
        std::fill(dst + (c * H + y) * W + box.left, dst + (c * H + y) * W + box.left + box.width,
                  0.0f);
  }
}

ImageTransform draw_transform(const AugmentOptions& options, Generator& gen) {
  if (options.max_shift < 0) fail("augment: max_shift must be >= 0, got ", options.max_shift);
  ImageTransform t;
  if (options.max_shift > 0) {
    const auto span = static_cast<std::uint64_t>(2 * options.max_shift + 1);
    t.dy = static_cast<std::int64_t>(gen.below(span)) - options.max_shift;
    t.dx = static_cast<std::int64_t>(gen.below(span)) - options.max_shift;
  }
  if (options.horizontal_flip) t.flip = gen.below(2) == 1;
  return t;
}

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  return mix64(mix64(mix64(seed) ^ a) ^ b);
}

void transform_image(const std::uint8_t* src, std::int64_t C, std::int64_t H, std::int64_t W,
                     const ImageTransform& t, const float* lut, float* dst) {
  // Output columns x whose source column lies inside the image: sx = x + dx without a flip,
  // sx = W - 1 - x + dx with one; both need 0 <= sx < W.
  std::int64_t x_lo, x_hi;  // [x_lo, x_hi)
  if (!t.flip) {
    x_lo = std::max<std::int64_t>(0, -t.dx);
    x_hi = std::min<std::int64_t>(W, W - t.dx);
  } else {
    x_lo = std::max<std::int64_t>(0, t.dx);
    x_hi = std::min<std::int64_t>(W, W + t.dx);
  }
  x_lo = std::min(x_lo, W);  // a shift of W or more leaves no column inside
  x_hi = std::max(x_hi, x_lo);
  for (std::int64_t c = 0; c < C; ++c) {
    const float* table = lut + c * 256;  // (256,)
    const float zero = table[0];        // what a padding pixel normalises to
    const std::uint8_t* plane = src + c * H * W;  // (H, W)
    float* out = dst + c * H * W;                 // (H, W)
    for (std::int64_t y = 0; y < H; ++y, out += W) {
      const std::int64_t sy = y + t.dy;
      if (sy < 0 || sy >= H) {
        std::fill(out, out + W, zero);
        continue;
      }
      const std::uint8_t* row = plane + sy * W;  // (W,)
      std::fill(out, out + x_lo, zero);
      if (!t.flip)
        for (std::int64_t x = x_lo; x < x_hi; ++x) out[x] = table[row[x + t.dx]];
      else
        for (std::int64_t x = x_lo; x < x_hi; ++x) out[x] = table[row[W - 1 - x + t.dx]];
      std::fill(out + x_hi, out + W, zero);
    }
  }
}

}  // namespace uwaga
