#include "data/augment.h"

#include <algorithm>

#include "core/error.h"

namespace uwaga {
namespace {

std::uint64_t mix64(std::uint64_t z) {  // the splitmix64 finaliser
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

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
