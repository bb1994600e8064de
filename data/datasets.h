#pragma once
// The image datasets by name, as the apps' --dataset flag spells them:
//   "mnist"          handwritten digits, 1 x 28 x 28, IDX files (raw or .gz)
//   "fashion-mnist"  clothing, same format and file names as MNIST
//   "cifar10"        colour photos, 3 x 32 x 32, binary batches
// data/fetch.sh NAME DIR puts the files where load_dataset looks for them; when they are missing
// the error says exactly which command to run.
#include <string>
#include <vector>

#include "data/images/image_dataset.h"

namespace uwaga {

std::vector<std::string> dataset_names();  // {"mnist", "fashion-mnist", "cifar10"}

// Where data/fetch.sh puts a dataset by default, relative to the repository root.
std::string default_data_dir(const std::string& name);

// MNIST / Fashion-MNIST: DIR/train-images-idx3-ubyte and DIR/train-labels-idx1-ubyte (t10k-... for
// the test set), each raw or with a .gz suffix.
ImageDataset load_mnist_like(const std::string& name, const std::string& dir, bool train);

// The training (train = true) or test split of the named dataset from `dir`.
ImageDataset load_dataset(const std::string& name, const std::string& dir, bool train);

}  // namespace uwaga
