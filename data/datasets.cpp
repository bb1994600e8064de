#include "data/datasets.h"

#include <filesystem>

#include "core/error.h"
#include "data/images/cifar10.h"
#include "data/images/idx.h"

namespace uwaga {
namespace {

namespace fs = std::filesystem;

std::string fetch_command(const std::string& name, const std::string& dir) {
  return "data/fetch.sh " + name + " " + dir;
}

// DIR/base or DIR/base.gz, whichever exists; otherwise an error with the fetch command.
std::string find_idx_file(const std::string& name, const std::string& dir, const std::string& base) {
  std::error_code ec;
  const fs::path raw = fs::path(dir) / base;
  const fs::path gz = fs::path(dir) / (base + ".gz");
  for (const fs::path& path : {raw, gz}) {
    if (fs::exists(path, ec)) return path.string();
    // Not "not found" when the directory cannot be searched (no permission, not a directory).
    if (ec && ec != std::errc::no_such_file_or_directory)
      fail(name, ": cannot look for ", path.string(), ": ", ec.message());
  }
  fail(name, ": ", raw.string(), " not found (nor ", gz.filename().string(),
       "); run: ", fetch_command(name, dir));
}

std::vector<std::string> fashion_mnist_class_names() {
  return {"t-shirt/top", "trouser", "pullover", "dress", "coat",
          "sandal",      "shirt",   "sneaker",  "bag",   "ankle boot"};
}

}  // namespace

std::vector<std::string> dataset_names() { return {"mnist", "fashion-mnist", "cifar10"}; }

std::string default_data_dir(const std::string& name) { return "data/cache/" + name; }

ImageDataset load_mnist_like(const std::string& name, const std::string& dir, bool train) {
  const std::string prefix = train ? "train" : "t10k";
  const std::string images = find_idx_file(name, dir, prefix + "-images-idx3-ubyte");
  const std::string labels = find_idx_file(name, dir, prefix + "-labels-idx1-ubyte");
  return load_idx(images, labels, name == "fashion-mnist" ? fashion_mnist_class_names()
                                                          : std::vector<std::string>{});
}

ImageDataset load_dataset(const std::string& name, const std::string& dir, bool train) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    fail(name, ": the data directory ", dir, " is not a directory");
  if (name == "mnist" || name == "fashion-mnist") return load_mnist_like(name, dir, train);
  if (name == "cifar10") {
    const fs::path batch_dir = cifar10_batch_dir(dir, train);
    for (const std::string& file : cifar10_files(train))
      if (!fs::exists(batch_dir / file, ec) && ec && ec != std::errc::no_such_file_or_directory)
        fail("cifar10: cannot look for ", (batch_dir / file).string(), ": ", ec.message());
      else if (!fs::exists(batch_dir / file, ec))
        fail("cifar10: ", (batch_dir / file).string(), " not found; run: ",
             fetch_command(name, dir), " (or, from a local copy of the batches: ",
             fetch_command(name, dir), " --from COPY_DIR)");
    return load_cifar10(dir, train);
  }
  std::string valid;
  for (const std::string& n : dataset_names()) valid += (valid.empty() ? "" : ", ") + n;
  fail("load_dataset: unknown dataset '", name, "'; valid names: ", valid);
}

}  // namespace uwaga
