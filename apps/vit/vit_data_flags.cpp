#include "apps/vit/vit_data_flags.h"

#include "apps/common/command_line.h"
#include "data/datasets.h"

namespace uwaga::apps {

using cxxopts::value;

void add_vit_data_flags(cxxopts::Options& o, const std::string& dataset_default) {
  o.add_options()("dataset", "mnist, fashion-mnist or cifar10 (default: " + dataset_default + ")",
                  value<std::string>());
  add_data_dir_flag(o, "where the dataset's files are (default: data/cache/DATASET)");
}

VitData vit_data(const cxxopts::ParseResult& r, const std::string& dataset) {
  VitData d{r.count("dataset") ? r["dataset"].as<std::string>() : dataset, ""};
  d.dir = data_dir_or(r, default_data_dir(d.dataset));
  return d;
}

}  // namespace uwaga::apps
