#pragma once
// Training-time augmentation: each epoch shows every image slightly moved (and, for photos,
// possibly mirrored), so the model cannot memorise exact pixel positions. Evaluation never
// augments. The transform of an image is drawn from a generator seeded by (loader seed, epoch,
// image index), so it is reproducible and does not depend on which thread builds the batch.
#include <cstdint>

#include "core/random.h"

namespace uwaga {

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

  bool enabled() const { return max_shift > 0 || horizontal_flip; }

  static AugmentOptions none() { return {}; }
  static AugmentOptions cifar10() { return {4, true}; }
  static AugmentOptions mnist() { return {2, false}; }
  static AugmentOptions fashion_mnist() { return {1, true}; }
};

// What was drawn for one image.
struct ImageTransform {
  std::int64_t dy = 0;  // output row y shows input row y + dy
  std::int64_t dx = 0;  // output column x shows input column x + dx (before the flip)
  bool flip = false;    // mirror after shifting, as RandomHorizontalFlip after RandomCrop
};

ImageTransform draw_transform(const AugmentOptions& options, Generator& gen);

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
