// AutoAugment's CIFAR-10 policy against torchvision 0.14 (tests/golden/auto_augment.safetensors,
// written by tests/golden/make_auto_augment_golden.py): the policy table, the magnitude bins, the
// pixels of every sub-policy under every outcome of its draws, and the frequencies of the draws.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "data/images/auto_augment.h"
#include "tests/support/golden.h"

using namespace uwaga;
using uwaga::testing::load_golden;

namespace {

// The golden file packs an image's bytes eight to an I64, in numpy's little-endian view.
ByteImage unpack_image(const Tensor& packed, std::int64_t C, std::int64_t H, std::int64_t W) {
  static_assert(std::endian::native == std::endian::little, "the golden bytes are little-endian");
  REQUIRE(packed.numel() * 8 == C * H * W);
  ByteImage img(C, H, W);
  std::memcpy(img.pixels.data(), packed.data<std::int64_t>(), img.pixels.size());
  return img;
}

ByteImage image_of(const Tensor& t) {  // (C, H, W) int64 -> bytes
  ByteImage img(t.size(0), t.size(1), t.size(2));
  const std::vector<std::int64_t> v = t.to_indices();
  for (std::size_t i = 0; i < v.size(); ++i) img.pixels[i] = static_cast<std::uint8_t>(v[i]);
  return img;
}

std::vector<AugmentOp> auto_augment_ops() {  // RandAugment's 14, then Invert: the golden order
  std::vector<AugmentOp> ops = all_augment_ops();
  ops.push_back(AugmentOp::invert);
  return ops;
}

}  // namespace

TEST_CASE("AutoAugment: the CIFAR-10 policy is torchvision's", "[data][augment][autoaugment]") {
  const auto golden = load_golden("auto_augment");
  const std::vector<std::int64_t> ops = golden.get("policy.op").to_indices();
  const std::vector<std::int64_t> bins = golden.get("policy.bin").to_indices();
  const double* probability = golden.get("policy.probability").data<double>();
  const auto& policy = auto_augment_cifar10_policy();
  REQUIRE(policy.size() == 25);
  const std::vector<AugmentOp> op_of = auto_augment_ops();
  for (std::size_t i = 0; i < policy.size(); ++i) {
    const AutoAugmentStep steps[2] = {policy[i].first, policy[i].second};
    for (int j = 0; j < 2; ++j) {
      INFO("sub-policy " << i << " step " << j);
      CHECK(steps[j].op == op_of[ops[2 * i + j]]);
      CHECK(steps[j].probability == probability[2 * i + j]);
      CHECK(steps[j].bin == bins[2 * i + j]);
    }
  }
}

TEST_CASE("AutoAugment: the magnitude bins are torchvision's", "[data][augment][autoaugment]") {
  const auto golden = load_golden("auto_augment");
  for (AugmentOp op : auto_augment_ops()) {
    if (op == AugmentOp::identity) continue;  // not one of AutoAugment's ops
    const double* expected = golden.get("table." + augment_op_name(op)).data<double>();
    for (int bin = 0; bin < kAutoAugmentBins; ++bin) {
      INFO(augment_op_name(op) << " bin " << bin);
      CHECK(op_magnitude(AugmentSpace::auto_augment, op, bin, kAutoAugmentBins, 32, 32) ==
            expected[bin]);
    }
  }
}

TEST_CASE("AutoAugment: every sub-policy and outcome gives torchvision's pixels",
          "[data][augment][autoaugment]") {
  const auto golden = load_golden("auto_augment");
  const ByteImage in = image_of(golden.get("input"));
  int cases = 0, changed = 0;
  for (int n = 0; golden.has("case." + std::to_string(n)); ++n) {
    const std::vector<std::int64_t> c = golden.get("case." + std::to_string(n)).to_indices();
    AutoAugmentDraw draw;
    draw.sub_policy = static_cast<int>(c[0]);
    draw.applied[0] = c[1] != 0, draw.applied[1] = c[2] != 0;
    draw.negated[0] = c[3] != 0, draw.negated[1] = c[4] != 0;
    const ByteImage expected =
        unpack_image(golden.get("output." + std::to_string(n)), in.channels, in.height, in.width);
    const ByteImage got = apply_auto_augment(in, draw);
    std::int64_t differ = 0;
    int largest = 0;
    for (std::size_t i = 0; i < got.pixels.size(); ++i) {
      const int d = std::abs(int(got.pixels[i]) - int(expected.pixels[i]));
      differ += d != 0;
      largest = std::max(largest, d);
    }
    INFO("case " << n << ": sub-policy " << c[0] << ", applied " << c[1] << c[2] << ", negated "
                 << c[3] << c[4] << ": " << differ << " bytes differ, by up to " << largest);
    CHECK(differ == 0);  // exact, as the ops are (tests/data/test_image_ops.cpp)
    changed += expected.pixels != in.pixels;
    ++cases;
  }
  CHECK(cases == 138);  // every sub-policy: each step alone and both, each signed step's 2 signs
  CHECK(changed >= 120);  // the cases are not all the unchanged image
}

TEST_CASE("AutoAugment: the draws have the policy's frequencies", "[data][augment][autoaugment]") {
  // The probabilities come from the golden file, not from the table under test.
  const auto golden = load_golden("auto_augment");
  const double* probability = golden.get("policy.probability").data<double>();
  const int draws = 250'000, policies = 25;
  std::vector<int> chosen(policies, 0), ran(2 * policies, 0);
  int negated = 0;
  Generator gen(7);
  for (int k = 0; k < draws; ++k) {
    const AutoAugmentDraw d = draw_auto_augment(gen);
    REQUIRE((d.sub_policy >= 0 && d.sub_policy < policies));
    ++chosen[d.sub_policy];
    for (int j = 0; j < 2; ++j) ran[2 * d.sub_policy + j] += d.applied[j];
    negated += d.negated[0] + d.negated[1];
  }
  // Uniform over the 25: 10,000 each, σ ≈ 98; allow 5σ.
  for (int i = 0; i < policies; ++i) {
    INFO("sub-policy " << i << " drawn " << chosen[i] << " times of " << draws);
    CHECK(std::abs(chosen[i] - draws / policies) < 500);
  }
  // Step j of sub-policy i runs with probability p: the observed rate within 5σ (at most 0.025),
  // so a probability off by 0.1 (or two swapped) fails. p = 0 never runs.
  for (int i = 0; i < policies; ++i)
    for (int j = 0; j < 2; ++j) {
      const double p = probability[2 * i + j], rate = double(ran[2 * i + j]) / chosen[i];
      const double sigma = std::sqrt(std::max(p * (1 - p), 1e-4) / chosen[i]);
      INFO("sub-policy " << i << " step " << j << ": ran at rate " << rate << ", p = " << p);
      CHECK(std::abs(rate - p) < 5 * sigma);
      if (p == 0) CHECK(ran[2 * i + j] == 0);
    }
  // Each sign half the time: 500,000 bits, σ ≈ 0.0007.
  CHECK(std::abs(double(negated) / (2.0 * draws) - 0.5) < 0.004);
}

TEST_CASE("AutoAugment: the drawn policy applies what it drew", "[data][augment][autoaugment]") {
  ByteImage img(3, 32, 32);
  for (std::size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = std::uint8_t(i * 7 % 251);
  int changed = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    Generator g1(seed), g2(seed);
    const ByteImage a = auto_augment_cifar10(img, g1);
    CHECK(a.pixels == apply_auto_augment(img, draw_auto_augment(g2)).pixels);
    changed += a.pixels != img.pixels;
  }
  CHECK(changed >= 20);  // most sub-policies run at least one step more often than not
  AutoAugmentDraw bad;
  bad.sub_policy = 25;
  CHECK_THROWS_WITH(apply_auto_augment(img, bad), Catch::Contains("sub-policy 25 is outside 0 .. 24"));
}
