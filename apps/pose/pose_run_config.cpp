#include "apps/pose/pose_run_config.h"

#include <cmath>

#include "core/error.h"
#include "core/json_fields.h"

namespace uwaga::apps {
namespace {

// Marks the JSON as a uwaga-pose run configuration.
const char* const kFormat = "uwaga-pose-1";

// What both stick-figure presets share: 64 × 48 grey inputs, 4,096 new figures an epoch in
// batches of 64, σ = 1.5 heatmap cells, AdamW at 1e-3 with warm-up and cosine.
void stick_figures(PoseRunConfig& r) {
  set_pose_data(r, "synthetic");
  r.model.image_height = 64, r.model.image_width = 48;
  r.train_size = 4096, r.valid_size = 512, r.batch_size = 64;
  r.lr = 1e-3, r.min_lr = 1e-5, r.warmup = 200, r.weight_decay = 0.1, r.sigma = 1.5;
}

}  // namespace

void set_pose_data(PoseRunConfig& run, const std::string& data) {
  if (data == "synthetic") {
    run.model.channels = 1;
    run.model.joints = 15;
    run.flip = false;  // grey levels tell left from right: a mirror image contradicts them
  } else if (data == "coco") {
    run.model.channels = 3;
    run.model.joints = 17;
    run.flip = true;
  } else {
    fail("--dataset: unknown data '", data, "'; expected one of: synthetic, coco");
  }
  run.data = data;
}

std::vector<std::string> pose_preset_names() {
  return {"stick-classic", "stick-simple", "coco-small", "smoke"};
}

PoseRunConfig pose_preset(const std::string& name) {
  PoseRunConfig r;
  r.preset = name;
  if (name == "stick-classic") {
    // ViTPose's default decoder, two 4×4 transposed convolutions (64 channels) then 1×1, on
    // 8 × 8 patches: an 8 × 6 grid of 48 tokens, dim 128, 6 blocks; heatmaps 32 × 24 at stride 2.
    // Measured figures: README, "Finding joints".
    stick_figures(r);
    r.model.patch = 8, r.model.dim = 128, r.model.depth = 6, r.model.heads = 4;
    r.model.mlp_dim = 256, r.model.decoder = "classic", r.model.decoder_channels = 64;
    r.epochs = 40;
  } else if (name == "stick-simple") {
    // ViTPose's simple decoder — ReLU, bilinear ×4, 3×3 convolution — is linear in bilinearly
    // interpolated token features, so its heatmaps peak within a cell of a token's centre: on the
    // classic preset's 8 × 8 patches that is too coarse (PCK@0.1 about 77 %), so 4 × 4 patches,
    // a 16 × 12 grid of 192 tokens (narrower and shallower to pay for them: dim 64, 4 blocks),
    // heatmaps 64 × 48 at stride 1. Measured figures: README, "Finding joints".
    stick_figures(r);
    r.model.patch = 4, r.model.dim = 64, r.model.depth = 4, r.model.heads = 4;
    r.model.mlp_dim = 128, r.model.decoder = "simple", r.model.decoder_channels = 64;
    r.epochs = 45;
  } else if (name == "coco-small") {
    // COCO person crops at 128 × 96 (half ViTPose's 256 × 192), 8 × 8 patches: a 16 × 12 grid
    // and 64 × 48 heatmaps at stride 2. Not measured yet: a starting point for a long run.
    set_pose_data(r, "coco");
    r.model.image_height = 128, r.model.image_width = 96, r.model.patch = 8;
    r.model.dim = 192, r.model.depth = 6, r.model.heads = 6, r.model.mlp_dim = 768;
    r.model.decoder = "classic", r.model.decoder_channels = 128;
    r.epochs = 30, r.train_size = 0, r.valid_size = 1000, r.batch_size = 64;
    r.lr = 5e-4, r.min_lr = 1e-6, r.warmup = 500, r.weight_decay = 0.1, r.sigma = 2.0;
  } else if (name == "smoke") {
    // For smoke tests: a few seconds, learns something, not much.
    set_pose_data(r, "synthetic");
    r.model.image_height = 64, r.model.image_width = 48, r.model.patch = 8;
    r.model.dim = 32, r.model.depth = 1, r.model.heads = 2, r.model.mlp_dim = 64;
    r.model.decoder = "classic", r.model.decoder_channels = 16;
    r.epochs = 2, r.train_size = 160, r.valid_size = 32, r.batch_size = 16;
    r.lr = 2e-3, r.min_lr = 2e-4, r.warmup = 2, r.weight_decay = 0.0, r.sigma = 2.0;
  } else {
    std::string names;
    for (const auto& n : pose_preset_names()) names += (names.empty() ? "" : ", ") + n;
    fail("unknown preset '", name, "'; expected one of: ", names);
  }
  return r;
}

void PoseRunConfig::validate() const {
  model.validate();
  check_training_settings(*this);
  if (label_smoothing != 0)
    fail("--label-smoothing applies to class labels; heatmap targets have none (got ",
         label_smoothing, ")");
  if (data == "synthetic") {
    if (model.channels != 1 || model.joints != 15)
      fail("--dataset synthetic: stick figures are grey images with 15 joints, but the model has ",
           model.channels, " channels and ", model.joints, " joints");
    if (model.image_height < 16 || model.image_width < 16)
      fail("--dataset synthetic: stick figures are at least 16x16 pixels, the model reads ",
           model.image_height, "x", model.image_width);
    if (train_size < step_batch(*this))
      fail("--train-size ", train_size, " must hold at least one batch of ",
           step_batch_text(*this));
    if (!coco_annotations.empty() || !coco_images.empty())
      fail("--dataset synthetic draws its own figures: --coco-annotations and --data-dir are for "
           "--dataset coco");
    // The figures are drawn up front and held in memory (a 64x48 crop and its heatmaps: ~50 kB).
    constexpr std::int64_t kMaxFigures = 1000000;
    if (train_size > kMaxFigures || valid_size > kMaxFigures)
      fail("--dataset synthetic: --train-size and --valid-size may be at most ", kMaxFigures,
           ", got ", train_size, " and ", valid_size);
  } else if (data == "coco") {
    if (model.channels != 3 || model.joints != 17)
      fail("--dataset coco: COCO crops are colour images with 17 joints, but the model has ",
           model.channels, " channels and ", model.joints, " joints");
    if (coco_annotations.empty() || coco_images.empty())
      fail("--dataset coco needs --coco-annotations FILE.json and --data-dir DIR (its photos)");
    if (train_size < 0) fail("--train-size must be >= 0 (0: every person not held out), got ",
                             train_size);
  } else {
    fail("--dataset: unknown data '", data, "'; expected one of: synthetic, coco");
  }
  if (valid_size < 1) fail("--valid-size must be at least 1, got ", valid_size);
  if (!(sigma > 0 && sigma <= 100)) fail("--sigma must be in (0, 100] heatmap cells, got ", sigma);
}

std::string PoseRunConfig::to_json() const {
  nlohmann::json j = fields_to_json(*this);
  j["format"] = kFormat;
  return j.dump();
}

PoseRunConfig PoseRunConfig::from_json(const std::string& json) {
  const char* what = "the run configuration";
  nlohmann::json j = parse_json_input(json, what);
  complete_older_training_settings(j);
  if (!j.is_object() || !j.contains("format") || j.at("format") != kFormat)
    fail("no \"format\": \"", kFormat, "\" in its configuration");
  PoseRunConfig r;
  fields_from_json(j, r, what);
  r.validate();
  return r;
}

}  // namespace uwaga::apps
