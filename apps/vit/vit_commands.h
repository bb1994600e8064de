#pragma once
// The modes of uwaga-vit; each parses its own flags (argv[0] is the mode) and returns the
// exit status. Errors are thrown as uwaga::Error and reported by main() with status 2.
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

int vit_train(int argc, char** argv);
int vit_eval(int argc, char** argv);
int vit_predict(int argc, char** argv);
int vit_attention(int argc, char** argv);
int vit_explore(int argc, char** argv);  // apps/common/attention_explorer
int vit_plot(int argc, char** argv);  // apps/common/training_plot

}  // namespace uwaga::apps
