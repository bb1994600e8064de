#include <catch2/catch.hpp>

#include "apps/vit/vit_run_config.h"
#include "apps/vit/vit_training.h"
#include "core/uwaga.h"
#include "nn/vision_transformer.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::apps;
using uwaga::testing::max_abs_diff;

namespace {
// 12 random 8×8 colour images of 3 classes, and a run of a small sequence-pooling CCT on them.
ImageDataset random_images(std::uint64_t seed) {
  ImageDataset d;
  d.count = 12, d.channels = 3, d.height = d.width = 8;
  d.class_names = {"a", "b", "c"};
  Generator gen(seed);
  for (std::int64_t i = 0; i < d.count * d.image_size(); ++i)
    d.pixels.push_back(static_cast<std::uint8_t>(gen.uniform() * 255.999));
  for (std::int64_t i = 0; i < d.count; ++i) d.labels.push_back(i % 3);
  return d;
}

VitRunConfig small_run() {
  VitRunConfig run = vit_preset("cifar10-vit");
  run.model.image_size = 8, run.model.dim = 16, run.model.depth = 1, run.model.mlp_dim = 16;
  run.model.num_classes = 3;
  run.mean = {0.5f, 0.5f, 0.5f}, run.std = {0.25f, 0.25f, 0.25f};
  return run;
}
}  // namespace

TEST_CASE("mirror_images swaps left and right; twice is the identity", "[apps][eval]") {
  Generator gen(1);
  Tensor x = Tensor::randn({2, 3, 4, 5}, gen);
  Tensor m = mirror_images(x);
  for (std::int64_t w = 0; w < 5; ++w) REQUIRE(m.at({1, 2, 3, w}) == x.at({1, 2, 3, 4 - w}));
  REQUIRE(max_abs_diff(mirror_images(m), x) == 0.0);
}

TEST_CASE("evaluate_classifier with flip averages the logits of an image and its mirror image",
          "[apps][eval]") {
  const VitRunConfig run = small_run();
  Generator gen(2);
  nn::VisionTransformer model(run.model, gen);
  const ImageDataset data = random_images(3);
  const ClassifierEval plain = evaluate_classifier(model, data, run, 5);
  const ClassifierEval tta = evaluate_classifier(model, data, run, 5, true);
  REQUIRE(plain.n == 12);
  REQUIRE(tta.n == 12);
  // The same by hand: the images as the loader normalises them, the model in eval mode.
  ImageDataset mirrored = data;
  for (std::int64_t i = 0; i < data.count; ++i)
    for (std::int64_t c = 0; c < 3; ++c)
      for (std::int64_t h = 0; h < 8; ++h)
        for (std::int64_t w = 0; w < 8; ++w)
          mirrored.pixels[((i * 3 + c) * 8 + h) * 8 + w] = data.pixels[((i * 3 + c) * 8 + h) * 8 + 7 - w];
  const ClassifierEval of_mirrored = evaluate_classifier(model, mirrored, run, 5);
  // Mirroring the mirrored images gives the originals back: the same evaluation.
  const ClassifierEval tta_of_mirrored = evaluate_classifier(model, mirrored, run, 5, true);
  REQUIRE(tta_of_mirrored.correct == tta.correct);
  REQUIRE(tta_of_mirrored.loss == Approx(tta.loss).epsilon(1e-6));
  // Images that are their own mirror image: the average is the model's logits themselves.
  ImageDataset symmetric = data;
  for (std::int64_t i = 0; i < data.count * 3 * 8; ++i)
    for (std::int64_t w = 4; w < 8; ++w)
      symmetric.pixels[i * 8 + w] = symmetric.pixels[i * 8 + 7 - w];
  const ClassifierEval sym = evaluate_classifier(model, symmetric, run, 5);
  const ClassifierEval sym_tta = evaluate_classifier(model, symmetric, run, 5, true);
  REQUIRE(sym_tta.correct == sym.correct);
  REQUIRE(sym_tta.loss == Approx(sym.loss).epsilon(1e-6));
  REQUIRE(tta.loss != Approx(plain.loss).epsilon(1e-6));  // random images are not symmetric
  // Averaged logits are no worse in loss than the worse of the two (cross-entropy is convex).
  REQUIRE(tta.loss <= std::max(plain.loss, of_mirrored.loss) + 1e-6);
}
