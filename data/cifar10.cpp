#include "data/cifar10.h"

#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "data/idx.h"

namespace uwaga {

std::vector<std::string> cifar10_class_names() {
  return {"airplane", "automobile", "bird", "cat", "deer",
          "dog",      "frog",       "horse", "ship", "truck"};
}

std::vector<std::string> cifar10_files(bool train) {
  if (!train) return {"test_batch.bin"};
  return {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
          "data_batch_5.bin"};
}

std::string cifar10_batch_dir(const std::string& dir, bool train) {
  namespace fs = std::filesystem;
  const std::string first = cifar10_files(train).front();
  std::error_code ec;
  if (fs::exists(fs::path(dir) / first, ec)) return dir;
  const fs::path nested = fs::path(dir) / "cifar-10-batches-bin";
  if (fs::exists(nested / first, ec)) return nested.string();
  return dir;
}

ImageDataset read_cifar10_batch(const std::string& path) {
  const std::vector<std::uint8_t> bytes = read_file_bytes(path);
  const auto size = static_cast<std::int64_t>(bytes.size());
  if (size == 0 || size % kCifar10RecordBytes != 0)
    fail(path, ": size ", size, " bytes is not a multiple of the 3073-byte CIFAR-10 record (",
         size / kCifar10RecordBytes, " whole records and ", size % kCifar10RecordBytes,
         " bytes left over); the file is truncated or not a CIFAR-10 binary batch");
  ImageDataset data;
  data.count = size / kCifar10RecordBytes;
  data.channels = 3;
  data.height = 32;
  data.width = 32;
  data.class_names = cifar10_class_names();
  data.pixels.resize(static_cast<std::size_t>(data.count * kCifar10ImageBytes));
  data.labels.resize(static_cast<std::size_t>(data.count));
  for (std::int64_t i = 0; i < data.count; ++i) {
    const std::uint8_t* record = bytes.data() + i * kCifar10RecordBytes;
    if (record[0] > 9)
      fail(path, ": label ", int(record[0]), " at index ", i, " (byte offset ",
           i * kCifar10RecordBytes, "); expected 0..9");
    data.labels[static_cast<std::size_t>(i)] = record[0];
    std::memcpy(data.pixels.data() + i * kCifar10ImageBytes, record + 1, kCifar10ImageBytes);
  }
  return data;
}

ImageDataset load_cifar10(const std::string& dir, bool train) {
  const std::filesystem::path batch_dir = cifar10_batch_dir(dir, train);
  ImageDataset data;
  for (const std::string& file : cifar10_files(train))
    append_images(data, read_cifar10_batch((batch_dir / file).string()));
  return data;
}

}  // namespace uwaga
