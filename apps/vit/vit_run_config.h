#pragma once
// Everything a uwaga-vit training run is made of: the model, the data and the optimisation,
// with the presets the README documents. Flags override preset fields one by one.
#include <map>
#include <string>
#include <vector>

#include "apps/common/training_settings_json.h"
#include "data/images/augment.h"
#include "data/images/mixup.h"
#include "nn/vision_transformer.h"

namespace uwaga::apps {

struct VitRunConfig {
  std::string preset;
  std::string dataset = "mnist";
  nn::VitConfig model;
  std::int64_t epochs = 10;
  std::int64_t batch_size = 128;
  std::int64_t grad_accum = 1;  // batches of batch_size whose gradients make one step
  std::string precision = "fp32";  // of the matrix products: fp32 or bf16 (train_command.h)
  double lr = 1e-3;
  double min_lr = 1e-5;
  double weight_decay = 0.05;
  std::int64_t warmup = 500;  // optimizer steps of linear warm-up
  double label_smoothing = 0.0;
  double clip_norm = 1.0;
  bool augment = false;  // the dataset's random shifts (and flips)
  // The recipe beyond shifts and flips (apps/vit/vit_recipe.h has the flags); all off by default.
  // none, randaugment, trivialaugment or autoaugment (data/images/auto_augment.h)
  std::string policy = "none";
  std::int64_t randaugment_ops = 2;
  std::int64_t randaugment_magnitude = 9;
  double crop_scale = 0.0;       // random resized crops down to this area fraction; 0: off
  double erase = 0.0;            // probability of random erasing
  double mixup = 0.0;            // Beta(a, a) of mixup; 0: off (data/images/mixup.h)
  double cutmix = 0.0;           // Beta(a, a) of CutMix; 0: off
  double mix_probability = 1.0;  // of mixing a batch when mixup or CutMix is on
  double ema = 0.0;              // decay of the weights' moving average evaluated; 0: off
  std::uint64_t seed = 0;
  std::int64_t train_size = 0;  // train on the first N training images only; 0: all of them
  std::vector<float> mean, std;  // per-channel normalisation, measured on the training set
  std::vector<std::string> class_names;  // from the training set, for predictions

  std::string to_json() const;
  static VitRunConfig from_json(const std::string& json);
  // Throws an Error naming the flag when a value cannot work.
  void validate() const;

  // The JSON fields, one list for to_json and from_json (core/json_fields.h).
  template <class Field>
  static void fields(Field&& field) {
    field("preset", &VitRunConfig::preset);
    field("dataset", &VitRunConfig::dataset);
    field("model", &VitRunConfig::model);
    training_settings_fields<VitRunConfig>(field);
    field("augment", &VitRunConfig::augment);
    field("policy", &VitRunConfig::policy);
    field("randaugment_ops", &VitRunConfig::randaugment_ops);
    field("randaugment_magnitude", &VitRunConfig::randaugment_magnitude);
    field("crop_scale", &VitRunConfig::crop_scale);
    field("erase", &VitRunConfig::erase);
    field("mixup", &VitRunConfig::mixup);
    field("cutmix", &VitRunConfig::cutmix);
    field("mix_probability", &VitRunConfig::mix_probability);
    field("ema", &VitRunConfig::ema);
    field("seed", &VitRunConfig::seed);
    field("train_size", &VitRunConfig::train_size);
    field("mean", &VitRunConfig::mean);
    field("std", &VitRunConfig::std);
    field("class_names", &VitRunConfig::class_names);
  }
};

// The named presets; throws an Error listing the valid names for an unknown one.
VitRunConfig vit_preset(const std::string& name);
std::vector<std::string> vit_preset_names();
std::string vit_preset_list();  // the names, comma-separated, for help texts and errors

// The policy of a --policy name ("none", "randaugment", "trivialaugment", "autoaugment"); throws
// naming `what`.
AugmentPolicy augment_policy(const std::string& name, const char* what);

// The training loader's augmentation: the dataset's shift and flip when run.augment, then the
// recipe's pixel ops; and its Mixup / CutMix. Evaluation never augments.
AugmentOptions training_augment(const VitRunConfig& run);
MixOptions training_mix(const VitRunConfig& run);

// "shift 4, flip, randaugment 2x9; mixup 0.8; drop path 0.1; ema 0.999": the augmentation, then
// whatever else of the recipe is on. For run summaries.
std::string describe_recipe(const VitRunConfig& run);

// Throws an Error naming the flag when a recipe value cannot work (part of validate()).
void check_recipe(const VitRunConfig& run);

// Image geometry and class count of a dataset ("mnist": 1×28×28, 10 classes, ...).
void set_dataset_geometry(VitRunConfig& run, const std::string& dataset);

}  // namespace uwaga::apps
