#pragma once
// CIFAR-10, binary version (https://www.cs.toronto.edu/~kriz/cifar.html): 60,000 colour images of
// 32 x 32 in 10 classes. Each batch file is a run of 3,073-byte records:
//   byte 0        the label, 0..9
//   bytes 1..1024    red channel, 32 rows of 32
//   bytes 1025..2048 green channel
//   bytes 2049..3072 blue channel
// which is already the (C, H, W) layout of ImageDataset, so a record's pixels copy straight in.
// Training: data_batch_1.bin .. data_batch_5.bin (10,000 images each); test: test_batch.bin.
#include <cstdint>
#include <string>
#include <vector>

#include "data/images/image_dataset.h"

namespace uwaga {

constexpr std::int64_t kCifar10ImageBytes = 3 * 32 * 32;
constexpr std::int64_t kCifar10RecordBytes = 1 + kCifar10ImageBytes;  // 3,073
constexpr std::int64_t kCifar10BatchRecords = 10000;                  // in every official batch

// "airplane", "automobile", ... "truck", in label order.
std::vector<std::string> cifar10_class_names();

// The batch file names of one split, e.g. {"test_batch.bin"}.
std::vector<std::string> cifar10_files(bool train);

// The directory holding the batches: `dir` itself, or dir/cifar-10-batches-bin as the official
// tarball unpacks. Returns `dir` when neither holds the first file of the split.
std::string cifar10_batch_dir(const std::string& dir, bool train);

// One batch file (raw or gzip-compressed) of any whole number of records, except that a file
// named as an official batch (data_batch_1.bin .. data_batch_5.bin, test_batch.bin) must hold
// exactly 10,000: one cut on a record boundary would otherwise pass for a smaller batch.
ImageDataset read_cifar10_batch(const std::string& path);

// The training set (all five batches) or the test set from `dir` (see cifar10_batch_dir). Each
// batch must hold exactly `batch_records` records: the official 10,000, or fewer for the small
// batches tests write.
ImageDataset load_cifar10(const std::string& dir, bool train,
                          std::int64_t batch_records = kCifar10BatchRecords);

}  // namespace uwaga
