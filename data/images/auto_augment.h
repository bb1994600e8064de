#pragma once
// Automatic augmentation policies over the image ops of data/images/image_ops.h, as torchvision 0.14's
// (torchvision/transforms/autoaugment.py), drawing from a uwaga Generator instead of torch's:
//
//   RandAugment (Cubuk et al. 2020): `ops` times, an op drawn uniformly from the 14 below, at the
//     fixed magnitude bin `magnitude` of 31 (9: torchvision's default), its sign drawn for the
//     signed ops. Ranges: shear 0.3, translate 150/331 of the side, rotate 30°, colour factors
//     1 ± 0.9, posterize 8..4 bits, solarize threshold 255..0.
//   TrivialAugment-Wide (Müller & Hutter 2021): one op, one magnitude bin drawn uniformly, the
//     "wide" ranges: shear 0.99, translate 32 pixels, rotate 135°, factors 1 ± 0.99, posterize
//     8..2 bits.
//
// Magnitude tables are computed in float32 as torch.linspace does, so bin k means the same
// number as in torchvision.
#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"
#include "data/images/image_ops.h"

namespace uwaga {

enum class AugmentOp {
  identity, shear_x, shear_y, translate_x, translate_y, rotate, brightness, color, contrast,
  sharpness, posterize, solarize, autocontrast, equalize
};
constexpr int kAugmentOpCount = 14;

std::string augment_op_name(AugmentOp op);  // torchvision's: "ShearX", "Brightness", ...
std::vector<AugmentOp> all_augment_ops();   // in torchvision's order

enum class AugmentSpace { rand_augment, trivial_augment_wide };

// The magnitude of bin `bin` (0 .. bins − 1) of `op` in `space`, unsigned (0 for the ops without
// a magnitude); `image_size` (H, W) scales RandAugment's translations.
double op_magnitude(AugmentSpace space, AugmentOp op, int bin, int bins, std::int64_t height,
                    std::int64_t width);
bool op_is_signed(AugmentOp op);  // whether the magnitude is negated with probability 1/2

// torchvision's _apply_op: the op at a signed magnitude (posterize takes it as whole bits).
ByteImage apply_augment_op(const ByteImage& image, AugmentOp op, double magnitude);

struct RandAugmentOptions {
  int ops = 2;         // N: ops applied one after the other
  int magnitude = 9;   // M: the bin, 0 .. bins − 1
  int bins = 31;
  void validate() const;  // throws naming the bad field
};

ByteImage rand_augment(const ByteImage& image, const RandAugmentOptions& options, Generator& gen);
ByteImage trivial_augment_wide(const ByteImage& image, Generator& gen, int bins = 31);

}  // namespace uwaga
