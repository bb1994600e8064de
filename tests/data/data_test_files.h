#pragma once
// Helpers for the data tests: writers of small IDX / CIFAR-10 files (raw or gzipped), so the
// readers can be tested on files that are right and on files that are broken in one known way,
// and the shared TempDir to put them in.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"

namespace uwaga_test {

using Bytes = std::vector<std::uint8_t>;

using uwaga::testing::TempDir;

inline void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("test helper: cannot write " + path);
}

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes `bytes` gzip-compressed with zlib's gzwrite (mode "wb", or "ab" to append a member).
inline void write_gzip(const std::string& path, const Bytes& bytes, const char* mode = "wb") {
  gzFile f = gzopen(path.c_str(), mode);
  if (!f) throw std::runtime_error("test helper: cannot gzopen " + path);
  if (!bytes.empty() && gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == 0)
    throw std::runtime_error("test helper: gzwrite failed on " + path);
  gzclose(f);
}

inline void put_be32(Bytes& out, std::uint32_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 24));
  out.push_back(static_cast<std::uint8_t>(v >> 16));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v));
}

// The deterministic test pattern of pixel p of image i.
inline std::uint8_t pattern_pixel(std::int64_t i, std::int64_t p) {
  return static_cast<std::uint8_t>((i * 31 + p * 7 + 3) % 256);
}

// An IDX image file of `count` images of rows x cols holding pattern_pixel values.
inline Bytes idx_images(std::uint32_t count, std::uint32_t rows, std::uint32_t cols,
                        std::uint32_t magic = 2051) {
  Bytes out;
  put_be32(out, magic);
  put_be32(out, count);
  put_be32(out, rows);
  put_be32(out, cols);
  for (std::uint32_t i = 0; i < count; ++i)
    for (std::uint32_t p = 0; p < rows * cols; ++p) out.push_back(pattern_pixel(i, p));
  return out;
}

inline Bytes idx_labels(const std::vector<std::uint8_t>& labels, std::uint32_t magic = 2049) {
  Bytes out;
  put_be32(out, magic);
  put_be32(out, static_cast<std::uint32_t>(labels.size()));
  out.insert(out.end(), labels.begin(), labels.end());
  return out;
}

// A CIFAR-10 batch of `labels.size()` records; the pixels of record i are pattern_pixel(i, p).
inline Bytes cifar_records(const std::vector<std::uint8_t>& labels, std::int64_t first_index = 0) {
  Bytes out;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    out.push_back(labels[i]);
    for (std::int64_t p = 0; p < 3072; ++p)
      out.push_back(pattern_pixel(first_index + static_cast<std::int64_t>(i), p));
  }
  return out;
}

// A named pipe at `path`, and a writer that, as soon as a reader opens it, closes its end so the
// reader sees end of file. A reader that wrongly opens the FIFO therefore fails instead of
// blocking the test run forever; one that refuses it never opens it, and the writer gives up when
// the FifoWithWriter goes out of scope.
class FifoWithWriter {
 public:
  explicit FifoWithWriter(const std::string& path) {
    if (::mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("test helper: mkfifo " + path);
    writer_ = std::thread([this, path] {
      while (!stop_) {
        // O_NONBLOCK: fails with ENXIO until a reader has the FIFO open.
        const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd >= 0) {
          ::close(fd);
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  ~FifoWithWriter() {
    stop_ = true;
    writer_.join();
  }
  FifoWithWriter(const FifoWithWriter&) = delete;
  FifoWithWriter& operator=(const FifoWithWriter&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread writer_;
};

}  // namespace uwaga_test
