#pragma once
// Everything a uwaga-pose training run is made of: the data (synthetic stick figures or COCO
// keypoints), the model, the heatmap targets and the optimisation, with the presets the README
// documents. It travels in the checkpoint's metadata as JSON, so `eval`, `predict` and
// `attention` can rebuild the model. Flags override preset fields one by one.
#include <string>
#include <vector>

#include "apps/common/training_settings_json.h"
#include "nn/pose/vit_pose.h"

namespace uwaga::apps {

struct PoseRunConfig {
  std::string preset;
  // "synthetic": stick figures (data/pose/stick_figures.h), made on the fly — new ones every epoch —
  // and a fixed validation set; "coco": the persons of a COCO keypoints file, the last
  // valid_size of them held out for validation.
  std::string data = "synthetic";
  std::string coco_annotations;  // person_keypoints_*.json (--dataset coco)
  std::string coco_images;       // the directory of its photos (--data-dir)
  nn::PoseConfig model;
  std::int64_t epochs = 10;
  std::int64_t batch_size = 64;
  std::int64_t grad_accum = 1;  // batches of batch_size whose gradients make one step
  std::string precision = "fp32";  // of the matrix products: fp32 or bf16 (train_command.h)
  double lr = 1e-3;
  double min_lr = 1e-5;
  double weight_decay = 0.1;
  std::int64_t warmup = 200;     // optimizer steps of linear warm-up
  double label_smoothing = 0.0;  // must stay 0: heatmaps have no classes to smooth
  double clip_norm = 1.0;
  std::int64_t train_size = 4096;  // samples per epoch (coco: 0 for all that are not held out)
  std::int64_t valid_size = 512;   // validation samples
  double sigma = 1.5;              // the target Gaussians' σ, in heatmap cells
  // Mirror half the training samples (left and right swapped): set_pose_data turns it on for COCO
  // and off for stick figures, whose grey levels tell left from right (`train` refuses --flip).
  bool flip = false;
  std::uint64_t seed = 0;          // initialisation, the training samples, their order and flips

  std::string to_json() const;
  static PoseRunConfig from_json(const std::string& json);
  // Throws an Error naming the flag when a value cannot work.
  void validate() const;

  // The JSON fields, one list for to_json and from_json (core/json_fields.h); the JSON also
  // holds "format": "uwaga-pose-1".
  template <class Field>
  static void fields(Field&& field) {
    field("preset", &PoseRunConfig::preset);
    field("data", &PoseRunConfig::data);
    field("coco_annotations", &PoseRunConfig::coco_annotations);
    field("coco_images", &PoseRunConfig::coco_images);
    field("model", &PoseRunConfig::model);
    training_settings_fields<PoseRunConfig>(field);
    field("train_size", &PoseRunConfig::train_size);
    field("valid_size", &PoseRunConfig::valid_size);
    field("sigma", &PoseRunConfig::sigma);
    field("flip", &PoseRunConfig::flip);
    field("seed", &PoseRunConfig::seed);
  }
};

// The named presets; throws an Error listing the valid names for an unknown one.
PoseRunConfig pose_preset(const std::string& name);
std::vector<std::string> pose_preset_names();

// The data's image channels and joints in the model ("synthetic": 1 channel, 15 joints; "coco":
// 3 channels, 17 joints); throws naming --dataset for an unknown name.
void set_pose_data(PoseRunConfig& run, const std::string& data);

}  // namespace uwaga::apps
