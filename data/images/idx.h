#pragma once
// The IDX format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/):
//   bytes 0-3   magic number, big-endian: 2051 (0x00000803) for images, 2049 (0x00000801) for
//               labels — the 0x08 says "unsigned bytes", the last byte the number of dimensions
//   then one big-endian uint32 per dimension: (count, rows, cols) for images, (count) for labels
//   then the data, one byte per pixel or label, row-major.
// Files may be stored raw or gzip-compressed (as the mirrors and Debian ship them); the reader
// looks at the first two bytes (1f 8b) rather than at the file name.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/images/image_dataset.h"

namespace uwaga {

// The most a gzip data file is inflated to: 256 MiB, five times MNIST's largest file (47 MB). A small
// crafted file can claim any size (deflate reaches 1032:1, and members may follow one another
// without end); inflating stops at the limit instead of filling the memory.
inline constexpr std::size_t kMaxInflatedBytes = std::size_t{256} << 20;

// The bytes of a whole file, inflated when it starts with the gzip magic bytes, to at most
// `max_inflated` bytes, from a file on disk of at most kMaxInflatedBytes. A missing file, one
// that is not a regular file (core/regular_file.h) or is larger, a corrupt or truncated gzip
// stream, or one inflating past the limit are errors naming the file; the reader never returns a
// short result silently. (The
// CIFAR-10 reader uses this; the IDX readers bound a gzip file by what its header implies.)
std::vector<std::uint8_t> read_file_bytes(const std::string& path,
                                          std::size_t max_inflated = kMaxInflatedBytes);

struct IdxImages {
  std::int64_t count = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::vector<std::uint8_t> pixels;  // (count, height, width)
};

IdxImages read_idx_images(const std::string& path);
// Labels must lie in 0 .. num_classes - 1.
std::vector<std::int64_t> read_idx_labels(const std::string& path, std::int64_t num_classes = 10);

// Images and labels together as a one-channel dataset of at least one image; class_names default
// to "0" .. "9".
ImageDataset load_idx(const std::string& images_path, const std::string& labels_path,
                      std::vector<std::string> class_names = {});

}  // namespace uwaga
