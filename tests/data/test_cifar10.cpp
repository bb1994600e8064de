// The CIFAR-10 binary reader on small batches written here, right and broken, and on the real
// batches when data/fetch.sh has put them in data/cache/cifar10.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "data/images/cifar10.h"
#include "data/datasets.h"
#include "data_test_files.h"

using namespace uwaga;
using namespace uwaga_test;
using Catch::Contains;

namespace {

// Writes the five training batches (2 records each) and the test batch (3 records) into dir.
void write_small_cifar(const std::string& dir) {
  for (int b = 1; b <= 5; ++b)
    write_bytes(dir + "/data_batch_" + std::to_string(b) + ".bin",
                cifar_records({static_cast<std::uint8_t>(b), static_cast<std::uint8_t>(9 - b)},
                              2 * (b - 1)));
  write_bytes(dir + "/test_batch.bin", cifar_records({0, 5, 9}));
}

}  // namespace

TEST_CASE("cifar10: a batch round-trips in (C, H, W) layout", "[data][cifar10]") {
  TempDir dir;
  write_bytes(dir.file("b.bin"), cifar_records({6, 2}));
  const ImageDataset d = read_cifar10_batch(dir.file("b.bin"));
  REQUIRE(d.count == 2);
  REQUIRE(d.channels == 3);
  REQUIRE(d.height == 32);
  REQUIRE(d.width == 32);
  REQUIRE(d.labels == std::vector<std::int64_t>{6, 2});
  REQUIRE(d.class_names[6] == "frog");
  // Record byte 1 + c * 1024 + y * 32 + x is pixel (c, y, x).
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t c = 0; c < 3; ++c)
      for (std::int64_t y = 0; y < 32; y += 7)
        for (std::int64_t x = 0; x < 32; x += 5)
          REQUIRE(d.image(i)[c * 1024 + y * 32 + x] == pattern_pixel(i, c * 1024 + y * 32 + x));
}

TEST_CASE("cifar10: train and test splits, flat or in cifar-10-batches-bin", "[data][cifar10]") {
  TempDir dir;
  SECTION("flat") { write_small_cifar(dir.str()); }
  SECTION("nested as the official tarball unpacks") {
    std::filesystem::create_directories(dir.file("cifar-10-batches-bin"));
    write_small_cifar(dir.file("cifar-10-batches-bin"));
  }
  // The batches here are small, so the record count per batch is given (the official is 10,000).
  const ImageDataset train = load_cifar10(dir.str(), true, 2);
  REQUIRE(train.count == 10);
  REQUIRE(train.labels == std::vector<std::int64_t>{1, 8, 2, 7, 3, 6, 4, 5, 5, 4});
  for (std::int64_t i = 0; i < 10; ++i) REQUIRE(train.image(i)[100] == pattern_pixel(i, 100));
  const ImageDataset test = load_cifar10(dir.str(), false, 3);
  REQUIRE(test.count == 3);
  REQUIRE(test.labels == std::vector<std::int64_t>{0, 5, 9});
}

TEST_CASE("cifar10: a gzipped batch reads the same", "[data][cifar10]") {
  TempDir dir;
  write_gzip(dir.file("b.bin"), cifar_records({4}));
  const ImageDataset d = read_cifar10_batch(dir.file("b.bin"));
  REQUIRE(d.count == 1);
  REQUIRE(d.labels[0] == 4);
  REQUIRE(d.image(0)[3071] == pattern_pixel(0, 3071));
}

TEST_CASE("cifar10: broken files", "[data][cifar10]") {
  TempDir dir;
  SECTION("missing: the reader names the file, load_dataset gives the fetch command") {
    REQUIRE_THROWS_WITH(load_cifar10(dir.str(), true),
                        Contains(dir.file("data_batch_1.bin")) && Contains("not found"));
    REQUIRE_THROWS_WITH(load_dataset("cifar10", dir.str(), false),
                        Contains("cifar10: " + dir.file("test_batch.bin") + " not found") &&
                            Contains("run: data/fetch.sh cifar10 " + dir.str()));
  }
  SECTION("a data directory that cannot be searched is not called missing") {
    // A file where the directory should be (a directory without search permission gives
    // "cannot look for ...: Permission denied", which root cannot see). Before: "... not found;
    // run: data/fetch.sh".
    const std::string not_a_dir = dir.file("plain");
    { std::ofstream(not_a_dir) << "x"; }
    for (const char* name : {"mnist", "cifar10"})
      REQUIRE_THROWS_WITH(load_dataset(name, not_a_dir, true),
                          std::string(name) + ": the data directory " + not_a_dir +
                              " is not a directory");
  }
  SECTION("one missing training batch") {
    write_small_cifar(dir.str());
    std::filesystem::remove(dir.file("data_batch_4.bin"));
    REQUIRE_THROWS_WITH(load_dataset("cifar10", dir.str(), true),
                        Contains(dir.file("data_batch_4.bin")) && Contains("not found"));
  }
  SECTION("size not a multiple of 3073") {
    Bytes bytes = cifar_records({1, 2});
    bytes.resize(bytes.size() - 100);
    write_bytes(dir.file("short.bin"), bytes);
    REQUIRE_THROWS_WITH(read_cifar10_batch(dir.file("short.bin")),
                        Contains(dir.file("short.bin")) && Contains("size 6046 bytes") &&
                            Contains("not a multiple of the 3073-byte"));
    write_bytes(dir.file("empty.bin"), {});
    REQUIRE_THROWS_WITH(read_cifar10_batch(dir.file("empty.bin")),
                        Contains(dir.file("empty.bin")) && Contains("size 0 bytes"));
  }
  SECTION("label out of range") {
    write_bytes(dir.file("bad.bin"), cifar_records({3, 10, 1}));
    REQUIRE_THROWS_WITH(read_cifar10_batch(dir.file("bad.bin")),
                        Contains(dir.file("bad.bin")) && Contains("label 10 at index 1") &&
                            Contains("expected 0..9"));
  }
}

TEST_CASE("cifar10: an official batch must hold exactly 10000 records", "[data][cifar10]") {
  TempDir dir;
  // Cut on a record boundary: every record is whole, so only the count shows the damage.
  write_bytes(dir.file("data_batch_3.bin"), cifar_records(std::vector<std::uint8_t>(1043, 7)));
  REQUIRE_THROWS_WITH(read_cifar10_batch(dir.file("data_batch_3.bin")),
                      Contains(dir.file("data_batch_3.bin")) && Contains("size 3205139 bytes") &&
                          Contains("1043 records") && Contains("exactly 10000 records") &&
                          Contains("30730000 bytes"));
  write_bytes(dir.file("test_batch.bin"), cifar_records({1}));
  REQUIRE_THROWS_WITH(read_cifar10_batch(dir.file("test_batch.bin")),
                      Contains(dir.file("test_batch.bin")) && Contains("size 3073 bytes") &&
                          Contains("30730000 bytes"));
  // Compressed, the size is that of the content.
  write_gzip(dir.file("data_batch_1.bin"), cifar_records({1, 2}));
  REQUIRE_THROWS_WITH(read_cifar10_batch(dir.file("data_batch_1.bin")),
                      Contains(dir.file("data_batch_1.bin")) && Contains("size 6146 bytes"));

  // As the apps load them: the first short batch is named.
  TempDir small;
  write_small_cifar(small.str());
  REQUIRE_THROWS_WITH(load_dataset("cifar10", small.str(), true),
                      Contains(small.file("data_batch_1.bin")) && Contains("size 6146 bytes") &&
                          Contains("exactly 10000 records"));
  REQUIRE_THROWS_WITH(load_cifar10(small.str(), false),
                      Contains(small.file("test_batch.bin")) && Contains("size 9219 bytes"));
  // A count given explicitly is checked the same way.
  REQUIRE_THROWS_WITH(load_cifar10(small.str(), false, 4),
                      Contains(small.file("test_batch.bin")) && Contains("3 records") &&
                          Contains("exactly 4 records"));
  // Under any other name the reader takes any whole number of records.
  write_bytes(dir.file("subset.bin"), cifar_records({1}));
  REQUIRE(read_cifar10_batch(dir.file("subset.bin")).count == 1);
}

TEST_CASE("cifar10: the real batches, when fetched", "[data][cifar10][real]") {
  const std::string dir = std::string(UWAGA_SOURCE_DIR) + "/data/cache/cifar10";
  if (!std::filesystem::exists(dir + "/test_batch.bin")) {
    WARN("skipped: " << dir << " not fetched (run data/fetch.sh cifar10)");
    return;
  }
  const ImageDataset test = load_dataset("cifar10", dir, false);
  REQUIRE(test.count == 10000);
  std::vector<std::int64_t> per_class(10, 0);
  for (std::int64_t y : test.labels) ++per_class[static_cast<std::size_t>(y)];
  for (std::int64_t n : per_class) REQUIRE(n == 1000);  // CIFAR-10's test set is balanced
  const ImageDataset train = load_dataset("cifar10", dir, true);
  REQUIRE(train.count == 50000);
  // The usual normalisation constants (0.4914, 0.4822, 0.4465); the copy in /work/shared is
  // rebuilt from JPEGs, so allow a little slack.
  const ChannelStats stats = channel_stats(train);
  CHECK(stats.mean[0] == Approx(0.4914).margin(0.01));
  CHECK(stats.mean[1] == Approx(0.4822).margin(0.01));
  CHECK(stats.mean[2] == Approx(0.4465).margin(0.01));
}
