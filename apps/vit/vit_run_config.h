#pragma once
// Everything a uwaga-vit training run is made of: the model, the data and the optimisation,
// with the presets the README documents. Flags override preset fields one by one.
#include <map>
#include <string>
#include <vector>

#include "apps/common/training_settings_json.h"
#include "nn/vision_transformer.h"

namespace uwaga::apps {

struct VitRunConfig {
  std::string preset;
  std::string dataset = "mnist";
  nn::VitConfig model;
  std::int64_t epochs = 10;
  std::int64_t batch_size = 128;
  double lr = 1e-3;
  double min_lr = 1e-5;
  double weight_decay = 0.05;
  std::int64_t warmup = 500;  // optimizer steps of linear warm-up
  double label_smoothing = 0.0;
  double clip_norm = 1.0;
  bool augment = false;
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

// Image geometry and class count of a dataset ("mnist": 1×28×28, 10 classes, ...).
void set_dataset_geometry(VitRunConfig& run, const std::string& dataset);

}  // namespace uwaga::apps
