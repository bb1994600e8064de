#pragma once
// The flags of a uwaga-vit run's training recipe beyond the optimiser — augmentation (resized
// crops, AutoAugment / RandAugment / TrivialAugment-Wide, random erasing), Mixup / CutMix,
// stochastic depth, dropout, attention dropout and the weights' moving average; their fields and
// meaning are VitRunConfig's — and `uwaga-vit augment`, the picture of one image through every
// augmentation op.
#include <string>

#include <cxxopts.hpp>

#include "apps/vit/vit_run_config.h"

namespace uwaga::apps {

// The flags: --policy, --randaugment-ops, --randaugment-magnitude, --crop-scale, --erase,
// --mixup, --cutmix, --mix-prob, --drop-path, --dropout, --attention-dropout, --ema.
void add_recipe_flags(cxxopts::Options& options);
// Applies those the user gave on top of the preset; throws naming the flag for a bad value.
void apply_recipe_flags(VitRunConfig& run, const cxxopts::ParseResult& r);

// `uwaga-vit augment --index N --out grid.svg|png`: one training image (or a test image) through
// each op at five magnitudes, and samples of the whole policy.
int vit_augment(int argc, char** argv);

}  // namespace uwaga::apps
