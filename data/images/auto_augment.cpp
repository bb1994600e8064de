#include "data/images/auto_augment.h"

#include <cmath>

#include "core/error.h"

namespace uwaga {
namespace {

// torch.linspace(start, end, steps)[i] in float32, bit for bit as torch 1.13's CPU kernel (AVX2)
// computes it, so bin k is exactly torchvision's number (a translation of 15.999999 pixels is
// 15, of 16.0 is 16). With step = (end − start) / (steps − 1) in float32 and halfway = steps / 2,
// the kernel fills two 8-float vectors per iteration while 16 values remain: vector b..b+7 holds
// base + k·step, base = start + b·step (b < halfway) or end − (steps − b − 1)·step, each product
// and sum rounded; the rest one by one, start + i·step or end − (steps − i − 1)·step, fused
// multiply-adds (one rounding).
float linspace_f32(float start, float end, int steps, int i) {
  if (steps == 1) return start;
  const float step = (end - start) / static_cast<float>(steps - 1);
  const int halfway = steps / 2, vectorised = steps / 16 * 16;
  if (i < vectorised) {
    const int b = i / 8 * 8, k = i - b;
    volatile float offset = step * static_cast<float>(b < halfway ? b : steps - b - 1);
    const float base = b < halfway ? start + offset : end - offset;
    volatile float lane = static_cast<float>(k) * step;
    return base + lane;
  }
  return i < halfway ? std::fma(step, static_cast<float>(i), start)
                     : std::fma(-step, static_cast<float>(steps - i - 1), end);
}

}  // namespace

std::string augment_op_name(AugmentOp op) {
  switch (op) {
    case AugmentOp::identity: return "Identity";
    case AugmentOp::shear_x: return "ShearX";
    case AugmentOp::shear_y: return "ShearY";
    case AugmentOp::translate_x: return "TranslateX";
    case AugmentOp::translate_y: return "TranslateY";
    case AugmentOp::rotate: return "Rotate";
    case AugmentOp::brightness: return "Brightness";
    case AugmentOp::color: return "Color";
    case AugmentOp::contrast: return "Contrast";
    case AugmentOp::sharpness: return "Sharpness";
    case AugmentOp::posterize: return "Posterize";
    case AugmentOp::solarize: return "Solarize";
    case AugmentOp::autocontrast: return "AutoContrast";
    case AugmentOp::equalize: return "Equalize";
    case AugmentOp::invert: return "Invert";
  }
  return "?";
}

std::vector<AugmentOp> all_augment_ops() {
  std::vector<AugmentOp> ops;
  for (int i = 0; i < kAugmentOpCount; ++i) ops.push_back(static_cast<AugmentOp>(i));
  return ops;
}

bool op_is_signed(AugmentOp op) {
  switch (op) {
    case AugmentOp::shear_x: case AugmentOp::shear_y: case AugmentOp::translate_x:
    case AugmentOp::translate_y: case AugmentOp::rotate: case AugmentOp::brightness:
    case AugmentOp::color: case AugmentOp::contrast: case AugmentOp::sharpness:
      return true;
    default:
      return false;
  }
}

double op_magnitude(AugmentSpace space, AugmentOp op, int bin, int bins, std::int64_t height,
                    std::int64_t width) {
  if (bins < 2 || bin < 0 || bin >= bins)
    fail("augment: magnitude bin ", bin, " is outside 0 .. ", bins - 1, " (", bins, " bins)");
  // AutoAugment's ranges are RandAugment's; only TrivialAugment-Wide's differ.
  const bool wide = space == AugmentSpace::trivial_augment_wide;
  auto lin = [&](float end) { return static_cast<double>(linspace_f32(0.0f, end, bins, bin)); };
  switch (op) {
    case AugmentOp::shear_x: case AugmentOp::shear_y:
      return lin(wide ? 0.99f : 0.3f);
    case AugmentOp::translate_x:
      return lin(wide ? 32.0f : static_cast<float>(150.0 / 331.0 * static_cast<double>(width)));
    case AugmentOp::translate_y:
      return lin(wide ? 32.0f : static_cast<float>(150.0 / 331.0 * static_cast<double>(height)));
    case AugmentOp::rotate:
      return lin(wide ? 135.0f : 30.0f);
    case AugmentOp::brightness: case AugmentOp::color: case AugmentOp::contrast:
    case AugmentOp::sharpness:
      return lin(wide ? 0.99f : 0.9f);
    case AugmentOp::posterize: {
      // 8 − round(k / ((bins − 1) / r)) bits, r = 6 (wide) or 4, rounded half to even.
      const float per = static_cast<float>(bins - 1) / (wide ? 6.0f : 4.0f);
      return 8.0 - static_cast<double>(std::nearbyint(static_cast<float>(bin) / per));
    }
    case AugmentOp::solarize:
      return static_cast<double>(linspace_f32(255.0f, 0.0f, bins, bin));
    default:
      return 0.0;
  }
}

ByteImage apply_augment_op(const ByteImage& image, AugmentOp op, double m) {
  switch (op) {
    case AugmentOp::identity: return image;
    case AugmentOp::shear_x: return shear_x(image, m);
    case AugmentOp::shear_y: return shear_y(image, m);
    case AugmentOp::translate_x: return translate_x(image, m);
    case AugmentOp::translate_y: return translate_y(image, m);
    case AugmentOp::rotate: return rotate(image, m);
    case AugmentOp::brightness: return adjust_brightness(image, 1.0 + m);
    case AugmentOp::color: return adjust_saturation(image, 1.0 + m);
    case AugmentOp::contrast: return adjust_contrast(image, 1.0 + m);
    case AugmentOp::sharpness: return adjust_sharpness(image, 1.0 + m);
    case AugmentOp::posterize: return posterize(image, static_cast<int>(m));
    case AugmentOp::solarize: return solarize(image, m);
    case AugmentOp::autocontrast: return autocontrast(image);
    case AugmentOp::equalize: return equalize(image);
    case AugmentOp::invert: return invert(image);
  }
  fail("augment: unknown op ", static_cast<int>(op));
}

void RandAugmentOptions::validate() const {
  if (ops < 0 || ops > 16) fail("RandAugment: the number of ops must be from 0 to 16, got ", ops);
  if (bins < 2) fail("RandAugment: there must be at least 2 magnitude bins, got ", bins);
  if (magnitude < 0 || magnitude >= bins)
    fail("RandAugment: the magnitude must be from 0 to ", bins - 1, ", got ", magnitude);
}

ByteImage rand_augment(const ByteImage& image, const RandAugmentOptions& o, Generator& gen) {
  o.validate();
  ByteImage out = image;
  for (int i = 0; i < o.ops; ++i) {
    const auto op = static_cast<AugmentOp>(gen.below(kAugmentOpCount));
    double m = op_magnitude(AugmentSpace::rand_augment, op, o.magnitude, o.bins, image.height,
                            image.width);
    if (op_is_signed(op) && gen.below(2) == 1) m = -m;
    out = apply_augment_op(out, op, m);
  }
  return out;
}

ByteImage trivial_augment_wide(const ByteImage& image, Generator& gen, int bins) {
  const auto op = static_cast<AugmentOp>(gen.below(kAugmentOpCount));
  const int bin = static_cast<int>(gen.below(static_cast<std::uint64_t>(bins)));
  double m = op_magnitude(AugmentSpace::trivial_augment_wide, op, bin, bins, image.height,
                          image.width);
  if (op_is_signed(op) && gen.below(2) == 1) m = -m;
  return apply_augment_op(image, op, m);
}

const std::vector<AutoAugmentSubPolicy>& auto_augment_cifar10_policy() {
  using enum AugmentOp;
  // (op, probability, bin) twice, as torchvision 0.14 lists them (Cubuk et al. 2019, appendix).
  static const std::vector<AutoAugmentSubPolicy> policy = {
      {{invert, 0.1, -1}, {contrast, 0.2, 6}},
      {{rotate, 0.7, 2}, {translate_x, 0.3, 9}},
      {{sharpness, 0.8, 1}, {sharpness, 0.9, 3}},
      {{shear_y, 0.5, 8}, {translate_y, 0.7, 9}},
      {{autocontrast, 0.5, -1}, {equalize, 0.9, -1}},
      {{shear_y, 0.2, 7}, {posterize, 0.3, 7}},
      {{color, 0.4, 3}, {brightness, 0.6, 7}},
      {{sharpness, 0.3, 9}, {brightness, 0.7, 9}},
      {{equalize, 0.6, -1}, {equalize, 0.5, -1}},
      {{contrast, 0.6, 7}, {sharpness, 0.6, 5}},
      {{color, 0.7, 7}, {translate_x, 0.5, 8}},
      {{equalize, 0.3, -1}, {autocontrast, 0.4, -1}},
      {{translate_y, 0.4, 3}, {sharpness, 0.2, 6}},
      {{brightness, 0.9, 6}, {color, 0.2, 8}},
      {{solarize, 0.5, 2}, {invert, 0.0, -1}},
      {{equalize, 0.2, -1}, {autocontrast, 0.6, -1}},
      {{equalize, 0.2, -1}, {equalize, 0.6, -1}},
      {{color, 0.9, 9}, {equalize, 0.6, -1}},
      {{autocontrast, 0.8, -1}, {solarize, 0.2, 8}},
      {{brightness, 0.1, 3}, {color, 0.7, 0}},
      {{solarize, 0.4, 5}, {autocontrast, 0.9, -1}},
      {{translate_y, 0.9, 9}, {translate_y, 0.7, 9}},
      {{autocontrast, 0.9, -1}, {solarize, 0.8, 3}},
      {{equalize, 0.8, -1}, {invert, 0.1, -1}},
      {{translate_y, 0.7, 9}, {autocontrast, 0.9, -1}},
  };
  return policy;
}

AutoAugmentDraw draw_auto_augment(Generator& gen) {
  const auto& policy = auto_augment_cifar10_policy();
  AutoAugmentDraw d;
  d.sub_policy = static_cast<int>(gen.below(policy.size()));
  const AutoAugmentStep steps[2] = {policy[d.sub_policy].first, policy[d.sub_policy].second};
  // Drawn whether or not they are needed, in torchvision's order: the uniforms, then the signs.
  for (int j = 0; j < 2; ++j) d.applied[j] = gen.uniform() <= steps[j].probability;
  for (int j = 0; j < 2; ++j) d.negated[j] = gen.below(2) == 0;
  return d;
}

ByteImage apply_auto_augment(const ByteImage& image, const AutoAugmentDraw& draw) {
  const auto& policy = auto_augment_cifar10_policy();
  if (draw.sub_policy < 0 || draw.sub_policy >= static_cast<int>(policy.size()))
    fail("AutoAugment: sub-policy ", draw.sub_policy, " is outside 0 .. ", policy.size() - 1);
  const AutoAugmentStep steps[2] = {policy[draw.sub_policy].first, policy[draw.sub_policy].second};
  ByteImage out = image;
  for (int j = 0; j < 2; ++j) {
    if (!draw.applied[j]) continue;
    const AutoAugmentStep& s = steps[j];
    double m = s.bin < 0 ? 0.0
                         : op_magnitude(AugmentSpace::auto_augment, s.op, s.bin, kAutoAugmentBins,
                                        image.height, image.width);
    if (op_is_signed(s.op) && draw.negated[j]) m = -m;
    out = apply_augment_op(out, s.op, m);
  }
  return out;
}

ByteImage auto_augment_cifar10(const ByteImage& image, Generator& gen) {
  return apply_auto_augment(image, draw_auto_augment(gen));
}

}  // namespace uwaga
