// The training transform with pixel ops (resized crop, AutoAugment / RandAugment /
// TrivialAugment, erasing):
// reproducible per (seed, epoch, image), independent of the thread count, and off in evaluation.
#include <catch2/catch.hpp>
#include <omp.h>

#include "data/images/augment.h"
#include "data/data_loader.h"

using namespace uwaga;
using Catch::Contains;

namespace {

ImageDataset photos(std::int64_t count) {
  ImageDataset d;
  d.count = count, d.channels = 3, d.height = 12, d.width = 12;
  d.class_names = {"a", "b"};
  for (std::int64_t i = 0; i < count * 3 * 144; ++i)
    d.pixels.push_back(static_cast<std::uint8_t>((i * 131 + i / 7) % 256));
  for (std::int64_t i = 0; i < count; ++i) d.labels.push_back(i % 2);
  return d;
}

DataLoaderOptions options_with(AugmentPolicy policy) {
  DataLoaderOptions o;
  o.batch_size = 8;
  o.shuffle = true;
  o.seed = 11;
  o.augment = AugmentOptions::cifar10();
  o.augment.policy = policy;
  o.augment.crop_scale = 0.5;
  o.augment.erase_probability = 0.5;
  return o;
}

}  // namespace

TEST_CASE("augment pipeline: the same (seed, epoch, image) gives the same pixels",
          "[data][augment]") {
  const ImageDataset d = photos(16);
  for (AugmentPolicy policy : {AugmentPolicy::rand_augment, AugmentPolicy::trivial_augment_wide,
                               AugmentPolicy::auto_augment}) {
    DataLoader a(d, options_with(policy)), b(d, options_with(policy));
    const ImageBatch x = a.batch(3, 1);
    // Another thread count, another order of calls: the same batch.
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    b.batch(0, 0);
    const ImageBatch y = b.batch(3, 1);
    omp_set_num_threads(threads);
    REQUIRE(x.images.to_vector() == y.images.to_vector());
    REQUIRE(x.images.to_vector() != a.batch(4, 1).images.to_vector());  // a new epoch, new draws
    // make_batch of the same images in another order: each image keeps its own transform.
    std::vector<std::int64_t> reversed(x.indices.rbegin(), x.indices.rend());
    const ImageBatch r = a.make_batch(reversed, 3);
    const std::int64_t n = 3 * 144;
    for (std::int64_t k = 0; k < 8; ++k)
      for (std::int64_t i = 0; i < n; ++i)
        REQUIRE(r.images.flat((7 - k) * n + i) == x.images.flat(k * n + i));
  }
}

TEST_CASE("augment pipeline: erasing zeroes one rectangle of the normalised image",
          "[data][augment]") {
  Generator gen(2);
  int erased = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const ImageBox box = draw_erase_box(32, 32, gen);
    if (box.height == 0) continue;
    ++erased;
    REQUIRE(box.top >= 0);
    REQUIRE(box.left >= 0);
    REQUIRE(box.top + box.height <= 32);
    REQUIRE(box.left + box.width <= 32);
    const double area = static_cast<double>(box.height * box.width) / 1024.0;
    REQUIRE(area >= 0.01);  // 2–33 % before rounding the sides
    REQUIRE(area <= 0.40);
  }
  REQUIRE(erased > 190);
  // Through augment_image with only erasing on (probability 1): pixels outside the box are the
  // normalised originals, those inside 0.
  AugmentOptions o;
  o.erase_probability = 1.0;
  std::vector<std::uint8_t> src(2 * 8 * 8, 200);
  std::vector<float> lut(2 * 256, 0.0f);
  for (int c = 0; c < 2; ++c)
    for (int v = 0; v < 256; ++v) lut[c * 256 + v] = static_cast<float>(v) / 100.0f;
  std::vector<float> dst(src.size());
  Generator g(5);
  augment_image(src.data(), 2, 8, 8, o, g, lut.data(), dst.data());
  int zeros = 0;
  for (float v : dst) {
    REQUIRE((v == 0.0f || v == 2.0f));
    zeros += v == 0.0f;
  }
  REQUIRE(zeros > 0);
  REQUIRE(zeros % 2 == 0);  // the same box in both channels
}

TEST_CASE("augment pipeline: resized crops lie inside the image with the aspect range",
          "[data][augment]") {
  Generator gen(8);
  for (int trial = 0; trial < 300; ++trial) {
    const ImageBox b = draw_resized_crop(32, 32, 0.35, gen);
    REQUIRE(b.height >= 1);
    REQUIRE(b.top + b.height <= 32);
    REQUIRE(b.left + b.width <= 32);
    REQUIRE(static_cast<double>(b.height * b.width) >= 0.30 * 1024);
  }
}

TEST_CASE("augment pipeline: options are described and checked", "[data][augment]") {
  AugmentOptions o = AugmentOptions::cifar10();
  REQUIRE(o.describe() == "shift 4, flip");
  REQUIRE(!o.uses_pixel_ops());
  o.policy = AugmentPolicy::rand_augment;
  o.erase_probability = 0.25;
  REQUIRE(o.describe() == "shift 4, flip, randaugment 2x9, erase 0.25");
  REQUIRE(AugmentOptions::none().describe() == "none");
  o.policy = AugmentPolicy::auto_augment;
  o.erase_probability = 0;
  REQUIRE(o.describe() == "autoaugment, shift 4, flip");
  REQUIRE(o.uses_pixel_ops());
  o.crop_scale = 1.5;
  REQUIRE_THROWS_WITH(o.validate(), Contains("must be in [0, 1]"));
}

TEST_CASE("augment pipeline: AutoAugment runs before the shift and flip", "[data][augment]") {
  // As in the AutoAugment paper's pipeline and CCT's: the policy sees the image, not its
  // zero-padded shift. The draws keep their order (shift and flip first).
  AugmentOptions o = AugmentOptions::cifar10();
  o.policy = AugmentPolicy::auto_augment;
  const std::int64_t C = 3, H = 12, W = 12;
  const ImageDataset d = photos(1);
  std::vector<float> lut(C * 256);
  for (std::int64_t i = 0; i < C * 256; ++i) lut[i] = static_cast<float>(i % 256);
  int shifted = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    std::vector<float> got(C * H * W), expected(C * H * W);
    Generator g1(seed), g2(seed);
    augment_image(d.image(0), C, H, W, o, g1, lut.data(), got.data());
    const ImageTransform t = draw_transform(o, g2);
    const ByteImage policy = auto_augment_cifar10(ByteImage(C, H, W, d.image(0)), g2);
    transform_image(policy.pixels.data(), C, H, W, t, lut.data(), expected.data());
    INFO("seed " << seed << ": shift (" << t.dy << ", " << t.dx << "), flip " << t.flip);
    REQUIRE(got == expected);
    shifted += t.dy != 0 || t.dx != 0;
  }
  REQUIRE(shifted > 40);
}
