#pragma once
// Training-time augmentation: each epoch shows every image slightly moved (and, for photos,
// possibly mirrored), so the model cannot memorise exact pixel positions. Evaluation never
// augments. The transform of an image is drawn from a generator seeded by (loader seed, epoch,
// image index), so it is reproducible and does not depend on which thread builds the batch.
#include <cstdint>
#include <string>

#include "core/random.h"
#include "data/images/auto_augment.h"

namespace uwaga {

// Which automatic augmentation policy runs on each training image (data/images/auto_augment.h).
enum class AugmentPolicy { none, rand_augment, trivial_augment_wide, auto_augment };

struct AugmentOptions {
  // Random crop with zero padding: pad the image with max_shift zero pixels on every side and cut
  // an H x W window out at a random position. That is the same as shifting the image by a random
  // (dy, dx) in [-max_shift, max_shift] and filling the uncovered border with zeros, which is how
  // it is computed. CIFAR-10: 4 (torchvision's RandomCrop(32, padding=4)); MNIST: 2;
  // Fashion-MNIST: 1 (its garments fill the frame, so larger shifts cut them off).
  std::int64_t max_shift = 0;
  // Mirror left-right with probability 1/2 (photos and garments; not digits, where it changes the
  // meaning).
  bool horizontal_flip = false;
  // Random resized crop, before the shift (torchvision's RandomResizedCrop(scale = (crop_scale,
  // 1), ratio = (3/4, 4/3)), bilinear): a crop of that fraction of the area, resized to the whole
  // image. 0: off.
  double crop_scale = 0.0;
  // After the shift and flip: RandAugment (rand_augment.ops ops at bin rand_augment.magnitude)
  // or TrivialAugment-Wide. Before them: AutoAugment's CIFAR-10 policy, as the AutoAugment
  // paper's pipeline (and CCT's, which copies it) runs it on the unpadded image.
  AugmentPolicy policy = AugmentPolicy::none;
  RandAugmentOptions rand_augment;
  // Last, on the normalised image: with this probability a rectangle of 2–33 % of the area
  // (aspect 0.3–3.3) is set to 0, the channel means (torchvision's RandomErasing(value = 0)).
  double erase_probability = 0.0;

  // Beyond the shift and flip: the byte-image pipeline of augment_image.
  bool uses_pixel_ops() const {
    return crop_scale > 0 || policy != AugmentPolicy::none || erase_probability > 0;
  }
  bool enabled() const { return max_shift > 0 || horizontal_flip || uses_pixel_ops(); }
  // Throws naming the field when a value cannot work.
  void validate() const;
  // One line for run summaries: "shift 4, flip, randaugment 2x9, erase 0.25", "autoaugment,
  // shift 4, flip" or "none".
  std::string describe() const;

  static AugmentOptions none() { return {}; }
  static AugmentOptions shift_flip(std::int64_t max_shift, bool flip) {
    AugmentOptions o;
    o.max_shift = max_shift;
    o.horizontal_flip = flip;
    return o;
  }
  static AugmentOptions cifar10() { return shift_flip(4, true); }
  static AugmentOptions mnist() { return shift_flip(2, false); }
  static AugmentOptions fashion_mnist() { return shift_flip(1, true); }
};

// What was drawn for one image.
struct ImageTransform {
  std::int64_t dy = 0;  // output row y shows input row y + dy
  std::int64_t dx = 0;  // output column x shows input column x + dx (before the flip)
  bool flip = false;    // mirror after shifting, as RandomHorizontalFlip after RandomCrop
};

ImageTransform draw_transform(const AugmentOptions& options, Generator& gen);

// A rectangle of an image: rows [top, top + height), columns [left, left + width).
struct ImageBox {
  std::int64_t top = 0, left = 0, height = 0, width = 0;
};

// torchvision's RandomResizedCrop.get_params: up to 10 tries of an area fraction in [scale_min,
// 1] and a log-uniform aspect ratio in [3/4, 4/3] that fits, else the whole image (cut to that
// aspect range).
ImageBox draw_resized_crop(std::int64_t H, std::int64_t W, double scale_min, Generator& gen);

// torchvision's RandomErasing.get_params (scale 0.02–0.33, ratio 0.3–3.3): the box to erase, or
// an empty box (height 0) when 10 tries find none that fits.
ImageBox draw_erase_box(std::int64_t H, std::int64_t W, Generator& gen);

// The whole training transform of one image when options.uses_pixel_ops(): the draws of
// draw_transform first, then, in this order, resized crop → AutoAugment → shift → flip →
// RandAugment or TrivialAugment-Wide → normalise (lut, as transform_image) → erase. `gen` is the
// image's own generator.
void augment_image(const std::uint8_t* src,  // (C, H, W)
                   std::int64_t C, std::int64_t H, std::int64_t W,
                   const AugmentOptions& options, Generator& gen,
                   const float* lut,  // (C, 256)
                   float* dst);       // (C, H, W)

// A seed for an independent stream of random numbers, from a base seed and two counters (e.g.
// epoch and image index). Mixing through splitmix64 keeps nearby counters uncorrelated.
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b);

// Writes one float image from one byte image, transformed and normalised on the way:
//   dst(c, y, x) = lut[c * 256 + src(c, y + dy, x' + dx)], x' = flip ? W - 1 - x : x,
// with byte value 0 where (y + dy, x' + dx) falls outside the image (the zero padding).
// lut maps each byte value of each channel to its normalised float, so no pixel divides.
void transform_image(const std::uint8_t* src,  // (C, H, W)
                     std::int64_t C, std::int64_t H, std::int64_t W, const ImageTransform& t,
                     const float* lut,  // (C, 256)
                     float* dst);       // (C, H, W)

}  // namespace uwaga
