#include "data/images/cifar10.h"

#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "data/images/idx.h"

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

namespace {

// The records of one batch file; with expected_records > 0 the file must hold exactly that many.
ImageDataset read_batch(const std::string& path, std::int64_t expected_records) {
  const std::vector<std::uint8_t> bytes = read_file_bytes(path);
  const auto size = static_cast<std::int64_t>(bytes.size());
  const std::int64_t whole = size / kCifar10RecordBytes, left = size % kCifar10RecordBytes;
  // A batch cut on a record boundary has only whole records: only its size tells.
  if (expected_records > 0 && size != expected_records * kCifar10RecordBytes)
    fail(path, ": size ", size, " bytes (", whole, " records",
         left ? " and " + std::to_string(left) + " bytes left over" : std::string(),
         "), but a CIFAR-10 batch holds exactly ", expected_records, " records of ",
         kCifar10RecordBytes, " bytes: ", expected_records * kCifar10RecordBytes,
         " bytes; the file is truncated or not a CIFAR-10 binary batch");
  if (size == 0 || left != 0)
    fail(path, ": size ", size, " bytes is not a multiple of the 3073-byte CIFAR-10 record (",
         whole, " whole records and ", left,
         " bytes left over); the file is truncated or not a CIFAR-10 binary batch");
  ImageDataset data;
  data.count = whole;
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

bool is_official_batch_name(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  for (bool train : {true, false})
    for (const std::string& official : cifar10_files(train))
      if (name == official) return true;
  return false;
}

}  // namespace

ImageDataset read_cifar10_batch(const std::string& path) {
  return read_batch(path, is_official_batch_name(path) ? kCifar10BatchRecords : 0);
}

ImageDataset load_cifar10(const std::string& dir, bool train, std::int64_t batch_records) {
  if (batch_records < 1)
    fail("load_cifar10: ", batch_records, " records per batch; expected at least 1");
  const std::filesystem::path batch_dir = cifar10_batch_dir(dir, train);
  ImageDataset data;
  for (const std::string& file : cifar10_files(train))
    append_images(data, read_batch((batch_dir / file).string(), batch_records));
  return data;
}

}  // namespace uwaga
