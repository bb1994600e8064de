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
//   AutoAugment (Cubuk et al. 2019) with its CIFAR-10 policy: one of 25 sub-policies drawn
//     uniformly, each two (op, probability, magnitude bin of 10) that the search found; op j runs
//     with its probability, at its bin, its sign drawn for the signed ops. RandAugment's ranges
//     (RandAugment took them from AutoAugment), plus Invert.
//
// Magnitude tables are computed in float32 as torch.linspace does, so bin k means the same
// number as in torchvision.
#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"
#include "data/images/image_ops.h"

namespace uwaga {

// The first 14 are the ops RandAugment and TrivialAugment-Wide draw from, in torchvision's order;
// invert is AutoAugment's alone.
enum class AugmentOp {
  identity, shear_x, shear_y, translate_x, translate_y, rotate, brightness, color, contrast,
  sharpness, posterize, solarize, autocontrast, equalize, invert
};
constexpr int kAugmentOpCount = 14;  // the ops RandAugment and TrivialAugment-Wide draw from

std::string augment_op_name(AugmentOp op);  // torchvision's: "ShearX", "Brightness", ...
std::vector<AugmentOp> all_augment_ops();   // RandAugment's 14, in torchvision's order

// AutoAugment's ranges are RandAugment's (torchvision's _augmentation_space of each), over 10
// bins where RandAugment has 31.
enum class AugmentSpace { rand_augment, trivial_augment_wide, auto_augment };

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

// AutoAugment. One step of a sub-policy: the op runs with `probability`, at magnitude bin `bin`
// of kAutoAugmentBins (-1 for the ops without a magnitude).
struct AutoAugmentStep {
  AugmentOp op;
  double probability;
  int bin;
};
struct AutoAugmentSubPolicy {
  AutoAugmentStep first, second;
};
constexpr int kAutoAugmentBins = 10;
// The 25 sub-policies of AutoAugment's CIFAR-10 policy, as torchvision's AutoAugmentPolicy.CIFAR10.
const std::vector<AutoAugmentSubPolicy>& auto_augment_cifar10_policy();

// What AutoAugment drew for one image: the sub-policy, and for each of its two steps whether it
// runs and whether its magnitude is negated (signed ops only).
struct AutoAugmentDraw {
  int sub_policy = 0;
  bool applied[2] = {false, false};
  bool negated[2] = {false, false};
};
// torchvision's AutoAugment.get_params and its comparisons, from `gen`: the sub-policy uniformly,
// then u_1, u_2 uniform in [0, 1) (step j runs when u_j <= p_j), then two sign bits (s_j = 0
// negates).
AutoAugmentDraw draw_auto_augment(Generator& gen);
// Sub-policy `draw.sub_policy` of the CIFAR-10 policy with those outcomes: no randomness, so a
// test can check every outcome against torchvision's pixels.
ByteImage apply_auto_augment(const ByteImage& image, const AutoAugmentDraw& draw);
// Both: AutoAugment's CIFAR-10 policy on one image.
ByteImage auto_augment_cifar10(const ByteImage& image, Generator& gen);

}  // namespace uwaga
