// Mixup and CutMix: soft targets that sum to 1, pixels as drawn, Beta draws with the right mean,
// and reproducible batches from the DataLoader.
#include <catch2/catch.hpp>

#include <cmath>

#include "data/data_loader.h"
#include "data/images/mixup.h"

using namespace uwaga;
using Catch::Contains;

namespace {

Tensor images_of(std::int64_t B, std::int64_t C, std::int64_t H, std::int64_t W) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < B * C * H * W; ++i) v.push_back(static_cast<double>(i % 97));
  return Tensor::from_vector(v, {B, C, H, W}, DType::Float32);
}

}  // namespace

TEST_CASE("mixup: targets sum to 1 and images blend with the reversed batch", "[data][mixup]") {
  const std::int64_t B = 6, C = 2, H = 4, W = 5, K = 4;
  Tensor labels = Tensor::from_indices({0, 1, 2, 3, 0, 2}, {B});
  Generator gen(3);
  MixOptions o;
  o.mixup_alpha = 0.8;
  for (int trial = 0; trial < 20; ++trial) {
    const MixDraw d = draw_mix(o, H, W, gen);
    REQUIRE(d.mixed);
    REQUIRE(!d.cutmix);
    REQUIRE(d.lambda >= 0.0);
    REQUIRE(d.lambda <= 1.0);
    Tensor original = images_of(B, C, H, W);
    Tensor x = original.clone();
    Tensor t = mix_batch(x, labels, K, d);
    const std::vector<std::int64_t> y = labels.to_indices();
    for (std::int64_t k = 0; k < B; ++k) {
      double row = 0;
      for (std::int64_t c = 0; c < K; ++c) row += t.flat(k * K + c);
      REQUIRE(row == Approx(1.0).margin(1e-6));
      REQUIRE(t.flat(k * K + y[k]) >= d.lambda - 1e-6);  // its own label carries λ at least
      for (std::int64_t i = 0; i < C * H * W; ++i)
        REQUIRE(x.flat(k * C * H * W + i) ==
                Approx(d.lambda * original.flat(k * C * H * W + i) +
                       (1 - d.lambda) * original.flat((B - 1 - k) * C * H * W + i)).margin(1e-4));
    }
  }
}

TEST_CASE("cutmix: the box comes from the partner and λ is the uncovered share",
          "[data][mixup]") {
  const std::int64_t B = 4, C = 3, H = 8, W = 8, K = 10;
  Tensor labels = Tensor::from_indices({1, 5, 7, 9}, {B});
  Generator gen(9);
  MixOptions o;
  o.cutmix_alpha = 1.0;
  int boxes = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const MixDraw d = draw_mix(o, H, W, gen);
    REQUIRE(d.cutmix);
    const double box = static_cast<double>((d.bottom - d.top) * (d.right - d.left));
    REQUIRE(d.lambda == Approx(1.0 - box / (H * W)));
    boxes += box > 0;
    Tensor original = images_of(B, C, H, W);
    Tensor x = original.clone();
    Tensor t = mix_batch(x, labels, K, d);
    for (std::int64_t k = 0; k < B; ++k) {
      double row = 0;
      for (std::int64_t c = 0; c < K; ++c) row += t.flat(k * K + c);
      REQUIRE(row == Approx(1.0).margin(1e-6));
      for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t yy = 0; yy < H; ++yy)
          for (std::int64_t xx = 0; xx < W; ++xx) {
            const bool inside = yy >= d.top && yy < d.bottom && xx >= d.left && xx < d.right;
            const std::int64_t from = inside ? B - 1 - k : k;
            REQUIRE(x.flat(((k * C + c) * H + yy) * W + xx) ==
                    original.flat(((from * C + c) * H + yy) * W + xx));
          }
    }
  }
  REQUIRE(boxes > 10);
}

TEST_CASE("mixup: Beta draws have mean 1/2 and the right variance", "[data][mixup]") {
  for (double a : {0.2, 0.8, 1.0, 3.0}) {
    Generator gen(17);
    const int n = 20000;
    double s = 0, s2 = 0;
    for (int i = 0; i < n; ++i) {
      const double b = sample_beta(a, a, gen);
      REQUIRE(b >= 0.0);
      REQUIRE(b <= 1.0);
      s += b;
      s2 += b * b;
    }
    const double mean = s / n, var = s2 / n - mean * mean;
    INFO("alpha " << a);
    REQUIRE(mean == Approx(0.5).margin(0.01));
    REQUIRE(var == Approx(1.0 / (4.0 * (2.0 * a + 1.0))).epsilon(0.05));  // Var Beta(a, a)
  }
}

TEST_CASE("mixup: probability 0 leaves batches alone; bad options fail", "[data][mixup]") {
  MixOptions o;
  o.mixup_alpha = 1.0;
  o.probability = 0.0;
  Generator gen(1);
  REQUIRE(!draw_mix(o, 4, 4, gen).mixed);
  o.probability = 2;
  REQUIRE_THROWS_WITH(o.validate(), Contains("must be in [0, 1], got 2"));
  o = {};
  o.cutmix_alpha = -1;
  REQUIRE_THROWS_WITH(o.validate(), Contains("cutmix: alpha must be >= 0"));
}

TEST_CASE("DataLoader with mixup: soft targets, the same for the same (seed, epoch, batch)",
          "[data][mixup]") {
  ImageDataset d;
  d.count = 16, d.channels = 1, d.height = 4, d.width = 4;
  d.class_names = {"a", "b", "c"};
  for (std::int64_t i = 0; i < 16 * 16; ++i) d.pixels.push_back(static_cast<std::uint8_t>(i));
  for (std::int64_t i = 0; i < 16; ++i) d.labels.push_back(i % 3);
  DataLoaderOptions o;
  o.batch_size = 8;
  o.shuffle = true;
  o.drop_last = true;
  o.seed = 5;
  o.mix.mixup_alpha = 1.0;
  o.mix.cutmix_alpha = 1.0;
  DataLoader a(d, o), b(d, o);
  a.begin_epoch(2);
  b.begin_epoch(2);
  const Batch x = a.batch(1), y = b.batch(1);
  REQUIRE(x.targets.shape() == Shape{8, 3});
  REQUIRE(x.targets.dtype() == DType::Float32);
  REQUIRE(x.targets.to_vector() == y.targets.to_vector());
  REQUIRE(x.inputs[0].to_vector() == y.inputs[0].to_vector());
  for (std::int64_t k = 0; k < 8; ++k) {
    double row = 0;
    for (std::int64_t c = 0; c < 3; ++c) row += x.targets.flat(k * 3 + c);
    REQUIRE(row == Approx(1.0).margin(1e-6));
  }
  a.begin_epoch(3);
  REQUIRE(a.batch(1).inputs[0].to_vector() != x.inputs[0].to_vector());
}
