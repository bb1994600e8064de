// The IDX reader (MNIST, Fashion-MNIST) on small files written here, right and broken, and on the
// real datasets when data/fetch.sh has put them in data/cache/.
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/error.h"
#include "data/datasets.h"
#include "data/images/idx.h"
#include "data_test_files.h"

using namespace uwaga;
using namespace uwaga_test;
using Catch::Contains;

namespace {

const std::vector<std::uint8_t> kLabels = {3, 0, 9, 1, 7};

void check_pattern(const ImageDataset& d) {
  REQUIRE(d.count == 5);
  REQUIRE(d.channels == 1);
  REQUIRE(d.height == 4);
  REQUIRE(d.width == 3);
  REQUIRE(d.pixels.size() == 5u * 12u);
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t p = 0; p < 12; ++p) REQUIRE(d.image(i)[p] == pattern_pixel(i, p));
  REQUIRE(d.labels == std::vector<std::int64_t>{3, 0, 9, 1, 7});
  REQUIRE(d.class_names.size() == 10);
  REQUIRE(d.class_names[7] == "7");
}

}  // namespace

TEST_CASE("idx: raw files round-trip", "[data][idx]") {
  TempDir dir;
  write_bytes(dir.file("images"), idx_images(5, 4, 3));
  write_bytes(dir.file("labels"), idx_labels(kLabels));
  check_pattern(load_idx(dir.file("images"), dir.file("labels")));
}

TEST_CASE("idx: gzip files round-trip, also with several gzip members", "[data][idx]") {
  TempDir dir;
  write_gzip(dir.file("images.gz"), idx_images(5, 4, 3));
  write_gzip(dir.file("labels.gz"), idx_labels(kLabels));
  check_pattern(load_idx(dir.file("images.gz"), dir.file("labels.gz")));

  // gzip allows members one after another (what `cat a.gz b.gz` makes).
  const Bytes images = idx_images(5, 4, 3);
  write_gzip(dir.file("two.gz"), Bytes(images.begin(), images.begin() + 30));
  write_gzip(dir.file("two.gz"), Bytes(images.begin() + 30, images.end()), "ab");
  check_pattern(load_idx(dir.file("two.gz"), dir.file("labels.gz")));
}

TEST_CASE("idx: a missing file is named", "[data][idx]") {
  TempDir dir;
  write_bytes(dir.file("labels"), idx_labels(kLabels));
  REQUIRE_THROWS_WITH(load_idx(dir.file("no-such-images"), dir.file("labels")),
                      Contains(dir.file("no-such-images")) && Contains("not found"));
}

TEST_CASE("idx: a directory, a FIFO or a device is refused as every reader refuses it",
          "[data][idx]") {
  // The words of core/regular_file.h, which every input file goes through.
  TempDir dir;
  std::filesystem::create_directory(dir.file("images"));
  REQUIRE_THROWS_WITH(read_file_bytes(dir.file("images")),
                      Contains(dir.file("images") + ": is a directory, not a regular file"));
  // Opening a FIFO would block until something writes to it.
  FifoWithWriter fifo(dir.file("pipe"));
  REQUIRE_THROWS_WITH(read_file_bytes(dir.file("pipe")),
                      Contains(dir.file("pipe") + ": is a FIFO (named pipe), not a regular file"));
  REQUIRE_THROWS_WITH(load_idx(dir.file("pipe"), dir.file("pipe")),
                      Contains("is a FIFO (named pipe), not a regular file"));
  // /dev/zero never ends: read whole, it would fill the memory.
  REQUIRE_THROWS_WITH(read_idx_images("/dev/zero"),
                      Contains("/dev/zero: is a character device, not a regular file"));
}

TEST_CASE("idx: a file larger than the reader's limit is refused before it is read",
          "[data][idx]") {
  TempDir dir;
  const std::string big = dir.file("big");
  write_bytes(big, idx_labels(kLabels));
  std::filesystem::resize_file(big, kMaxInflatedBytes + 1);  // sparse: nothing is written
  REQUIRE_THROWS_WITH(read_file_bytes(big),
                      Contains(big + ": holds " + std::to_string(kMaxInflatedBytes + 1) +
                               " bytes, more than the " + std::to_string(kMaxInflatedBytes)));
  REQUIRE_THROWS_WITH(read_idx_labels(big), Contains(big + ": holds"));
}

TEST_CASE("idx: wrong magic numbers", "[data][idx]") {
  TempDir dir;
  write_bytes(dir.file("images"), idx_images(5, 4, 3));
  write_bytes(dir.file("labels"), idx_labels(kLabels));
  write_bytes(dir.file("bad-images"), idx_images(5, 4, 3, 1234));
  write_bytes(dir.file("bad-labels"), idx_labels(kLabels, 4321));
  REQUIRE_THROWS_WITH(load_idx(dir.file("bad-images"), dir.file("labels")),
                      Contains(dir.file("bad-images")) && Contains("wrong magic number 1234") &&
                          Contains("expected 2051"));
  REQUIRE_THROWS_WITH(load_idx(dir.file("images"), dir.file("bad-labels")),
                      Contains(dir.file("bad-labels")) && Contains("wrong magic number 4321") &&
                          Contains("expected 2049"));
  // Images and labels given the wrong way round.
  REQUIRE_THROWS_WITH(load_idx(dir.file("labels"), dir.file("images")),
                      Contains("wrong magic number 2049") && Contains("swapped"));
}

TEST_CASE("idx: truncated and over-long files", "[data][idx]") {
  TempDir dir;
  write_bytes(dir.file("labels"), idx_labels(kLabels));
  Bytes images = idx_images(5, 4, 3);  // 16 + 60 = 76 bytes
  images.resize(70);
  write_bytes(dir.file("short-images"), images);
  REQUIRE_THROWS_WITH(load_idx(dir.file("short-images"), dir.file("labels")),
                      Contains(dir.file("short-images")) && Contains("truncated") &&
                          Contains("expected 76 bytes") && Contains("got 70"));

  write_bytes(dir.file("header-only"), Bytes{0, 0, 8, 3, 0, 0});
  REQUIRE_THROWS_WITH(load_idx(dir.file("header-only"), dir.file("labels")),
                      Contains(dir.file("header-only")) && Contains("truncated") &&
                          Contains("got 6"));

  Bytes huge;  // a damaged header promising 2^32 - 1 images of 65535 x 65535
  put_be32(huge, 2051);
  put_be32(huge, 0xffffffffu);
  put_be32(huge, 0xffffu);
  put_be32(huge, 0xffffu);
  write_bytes(dir.file("huge-header"), huge);
  REQUIRE_THROWS_WITH(load_idx(dir.file("huge-header"), dir.file("labels")),
                      Contains(dir.file("huge-header")) && Contains("truncated") &&
                          Contains("promises 4294967295 images of 65535 x 65535"));

  Bytes labels = idx_labels(kLabels);
  labels.push_back(0);
  write_bytes(dir.file("long-labels"), labels);
  write_bytes(dir.file("images"), idx_images(5, 4, 3));
  REQUIRE_THROWS_WITH(load_idx(dir.file("images"), dir.file("long-labels")),
                      Contains(dir.file("long-labels")) && Contains("expected 13 bytes") &&
                          Contains("got 14"));
}

TEST_CASE("idx: image and label counts must match", "[data][idx]") {
  TempDir dir;
  write_bytes(dir.file("images"), idx_images(5, 4, 3));
  write_bytes(dir.file("labels"), idx_labels({1, 2, 3, 4}));
  REQUIRE_THROWS_WITH(load_idx(dir.file("images"), dir.file("labels")),
                      Contains(dir.file("images")) && Contains("5 images") &&
                          Contains(dir.file("labels")) && Contains("4 labels"));
}

TEST_CASE("idx: labels out of range", "[data][idx]") {
  TempDir dir;
  write_bytes(dir.file("images"), idx_images(6, 4, 3));
  write_bytes(dir.file("labels"), idx_labels({1, 2, 3, 4, 5, 12}));
  REQUIRE_THROWS_WITH(load_idx(dir.file("images"), dir.file("labels")),
                      Contains(dir.file("labels")) && Contains("label 12 at index 5; expected 0..9"));
}

TEST_CASE("idx: a corrupt gzip stream is an error, never a short dataset", "[data][idx]") {
  TempDir dir;
  write_bytes(dir.file("labels"), idx_labels(kLabels));
  // Incompressible-ish content so the deflate stream is long enough to damage in the middle.
  Bytes images = idx_images(5, 4, 3);
  write_gzip(dir.file("good.gz"), images);
  const Bytes good = read_bytes(dir.file("good.gz"));
  REQUIRE(good.size() > 30);

  SECTION("a flipped byte in the compressed data") {
    Bytes bad = good;
    bad[good.size() / 2] ^= 0xff;
    write_bytes(dir.file("bad.gz"), bad);
    REQUIRE_THROWS_WITH(load_idx(dir.file("bad.gz"), dir.file("labels")),
                        Contains(dir.file("bad.gz")) && Contains("corrupt gzip"));
  }
  SECTION("a wrong CRC in the trailer") {
    Bytes bad = good;
    bad[good.size() - 8] ^= 0x01;
    write_bytes(dir.file("bad.gz"), bad);
    REQUIRE_THROWS_WITH(load_idx(dir.file("bad.gz"), dir.file("labels")),
                        Contains(dir.file("bad.gz")) && Contains("corrupt gzip"));
  }
  SECTION("the stream cut short") {
    write_bytes(dir.file("bad.gz"), Bytes(good.begin(), good.end() - 12));
    REQUIRE_THROWS_WITH(load_idx(dir.file("bad.gz"), dir.file("labels")),
                        Contains(dir.file("bad.gz")) && Contains("corrupt gzip") &&
                            Contains("ends early"));
  }
  SECTION("garbage after the stream") {
    Bytes bad = good;
    bad.push_back(0x42);
    bad.push_back(0x42);
    write_bytes(dir.file("bad.gz"), bad);
    REQUIRE_THROWS_WITH(load_idx(dir.file("bad.gz"), dir.file("labels")),
                        Contains(dir.file("bad.gz")) && Contains("unexpected bytes"));
  }
}

TEST_CASE("load_dataset: MNIST file names, raw or .gz, and the fetch command when missing",
          "[data][idx]") {
  TempDir dir;
  SECTION("missing files give the exact fetch command") {
    REQUIRE_THROWS_WITH(load_dataset("mnist", dir.str(), true),
                        Contains("mnist: " + dir.file("train-images-idx3-ubyte") + " not found") &&
                            Contains("run: data/fetch.sh mnist " + dir.str()));
    REQUIRE_THROWS_WITH(load_dataset("fashion-mnist", dir.str(), false),
                        Contains(dir.file("t10k-images-idx3-ubyte")) &&
                            Contains("run: data/fetch.sh fashion-mnist " + dir.str()));
  }
  SECTION("gzipped images and raw labels are both found") {
    write_gzip(dir.file("t10k-images-idx3-ubyte.gz"), idx_images(5, 4, 3));
    write_bytes(dir.file("t10k-labels-idx1-ubyte"), idx_labels(kLabels));
    check_pattern(load_dataset("mnist", dir.str(), false));
    const ImageDataset fashion = load_dataset("fashion-mnist", dir.str(), false);
    REQUIRE(fashion.class_names.size() == 10);
    REQUIRE(fashion.class_names[9] == "ankle boot");
  }
  SECTION("unknown names list the valid ones") {
    REQUIRE_THROWS_WITH(load_dataset("imagenet", dir.str(), true),
                        Contains("unknown dataset 'imagenet'") &&
                            Contains("valid names: mnist, fashion-mnist, cifar10"));
  }
}

TEST_CASE("idx: the real MNIST and Fashion-MNIST, when fetched", "[data][idx][real]") {
  for (const std::string name : {"mnist", "fashion-mnist"}) {
    const std::string dir = std::string(UWAGA_SOURCE_DIR) + "/data/cache/" + name;
    if (!std::filesystem::exists(dir + "/t10k-labels-idx1-ubyte")) {
      WARN("skipped: " << dir << " not fetched (run data/fetch.sh " << name << ")");
      continue;
    }
    const ImageDataset train = load_dataset(name, dir, true);
    const ImageDataset test = load_dataset(name, dir, false);
    REQUIRE(train.count == 60000);
    REQUIRE(test.count == 10000);
    REQUIRE(train.height == 28);
    REQUIRE(train.width == 28);
    std::vector<std::int64_t> per_class(10, 0);
    for (std::int64_t y : test.labels) ++per_class[static_cast<std::size_t>(y)];
    for (std::int64_t n : per_class) REQUIRE(n > 800);  // every class is there
    if (name == "mnist") {
      const ChannelStats stats = channel_stats(train);
      CHECK(stats.mean[0] == Approx(0.1307).epsilon(0.001));
      CHECK(stats.std[0] == Approx(0.3081).epsilon(0.001));
      CHECK(test.labels[0] == 7);  // the famous first test digit
    }
  }
}

TEST_CASE("idx: images of no rows or no columns are refused, naming the file",
          "[data][idx]") {
  TempDir dir;
  write_bytes(dir.file("labels"), idx_labels({1, 2}));
  write_bytes(dir.file("no-rows"), idx_images(2, 0, 28));
  REQUIRE_THROWS_WITH(load_idx(dir.file("no-rows"), dir.file("labels")),
                      Contains(dir.file("no-rows")) && Contains("images of 0 x 28 pixels"));
  write_bytes(dir.file("no-columns"), idx_images(2, 28, 0));
  REQUIRE_THROWS_WITH(read_idx_images(dir.file("no-columns")),
                      Contains(dir.file("no-columns")) && Contains("images of 28 x 0 pixels"));
}

TEST_CASE("idx: a file of no images is not a dataset", "[data][idx]") {
  TempDir dir;
  write_bytes(dir.file("images"), idx_images(0, 28, 28));
  write_bytes(dir.file("labels"), idx_labels({}));
  // The reader itself accepts it: a valid IDX file.
  REQUIRE(read_idx_images(dir.file("images")).count == 0);
  REQUIRE_THROWS_WITH(load_idx(dir.file("images"), dir.file("labels")),
                      Contains(dir.file("images")) && Contains("holds no images"));
}

TEST_CASE("idx: rows x columns beyond a signed 64-bit product is a truncated file",
          "[data][idx]") {
  // (2^32 - 1)^2 > 2^63: the product used to be taken in int64 (undefined behaviour, which the
  // UWAGA_SANITIZE build stops at); it fits an unsigned 64-bit product.
  TempDir dir;
  Bytes header;
  put_be32(header, 2051);
  put_be32(header, 1);
  put_be32(header, 0xffffffffu);
  put_be32(header, 0xffffffffu);
  write_bytes(dir.file("wide"), header);
  REQUIRE_THROWS_WITH(read_idx_images(dir.file("wide")),
                      Contains(dir.file("wide")) && Contains("truncated") &&
                          Contains("promises 1 images of 4294967295 x 4294967295"));
}

// Before: a gzip file was inflated whole before its header was looked at, so a small crafted file
// (deflate reaches 1032:1) could fill the memory. Now the header bounds the inflation.
TEST_CASE("idx: a gzip file inflating past what its header implies is refused early",
          "[data][idx]") {
  TempDir dir;
  write_bytes(dir.file("labels"), idx_labels(kLabels));
  Bytes bomb = idx_images(5, 4, 3);  // the header implies 76 bytes
  bomb.resize(64u << 20, 0);         // 64 MiB of zeros: a gzip file of about 64 kB
  write_gzip(dir.file("bomb.gz"), bomb);
  REQUIRE(read_bytes(dir.file("bomb.gz")).size() < 200000);
  REQUIRE_THROWS_WITH(load_idx(dir.file("bomb.gz"), dir.file("labels")),
                      Contains(dir.file("bomb.gz")) &&
                          Contains("inflates to more than 76 bytes") &&
                          Contains("refused without inflating the rest"));

  Bytes labels = idx_labels(kLabels);
  labels.resize(1u << 20, 0);
  write_gzip(dir.file("labels.gz"), labels);
  REQUIRE_THROWS_WITH(read_idx_labels(dir.file("labels.gz")),
                      Contains(dir.file("labels.gz")) && Contains("inflates to more than 13 bytes"));

  // A header promising more than the reader ever inflates: refused before inflating.
  Bytes huge;
  put_be32(huge, 2051);
  put_be32(huge, 0xffffffffu);
  put_be32(huge, 0xffffu);
  put_be32(huge, 0xffffu);
  write_gzip(dir.file("huge.gz"), huge);
  REQUIRE_THROWS_WITH(load_idx(dir.file("huge.gz"), dir.file("labels")),
                      Contains(dir.file("huge.gz")) && Contains("the IDX header promises more"));

  // Any other gzip data file (CIFAR-10's) has a stated maximum.
  write_gzip(dir.file("data.gz"), Bytes(1u << 20, 7));
  REQUIRE_THROWS_WITH(read_file_bytes(dir.file("data.gz"), 1000),
                      Contains(dir.file("data.gz")) && Contains("inflates to more than 1000"));
  CHECK(read_file_bytes(dir.file("data.gz"), 1u << 20).size() == 1u << 20);

  // Gzip files as long as their header says still load.
  write_gzip(dir.file("images.gz"), idx_images(5, 4, 3));
  write_gzip(dir.file("labels-ok.gz"), idx_labels(kLabels));
  check_pattern(load_idx(dir.file("images.gz"), dir.file("labels-ok.gz")));
}
