#pragma once
// Which dataset a uwaga-vit mode reads: the flags every such mode shares (the training modes in
// vit_commands, the inspecting ones in vit_inspect, `augment` in vit_recipe).
#include <cxxopts.hpp>

#include <string>

namespace uwaga::apps {

// The images a mode reads: --dataset (mnist, fashion-mnist or cifar10) and --data-dir, the same
// two flags in every mode that reads a dataset (train, eval, predict, attention, explore, augment).
struct VitData {
  std::string dataset;
  std::string dir;  // --data-dir, else data/cache/DATASET
};
// `dataset_default` says whose the dataset is when --dataset is not given ("the checkpoint's").
void add_vit_data_flags(cxxopts::Options& o, const std::string& dataset_default);
// --dataset, else `dataset`, and its directory.
VitData vit_data(const cxxopts::ParseResult& r, const std::string& dataset);

}  // namespace uwaga::apps
