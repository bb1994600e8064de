// The image readers on odd files a student may hand them: Netpbm headers promising far more data
// than the file holds, 16-bit samples, comments after the maximum value; IDX headers giving
// images of no pixels, no images at all, or dimensions whose product overflows a signed integer;
// the DataLoader given a batch size near the int64 limit.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <limits>
#include <string>

#include "core/error.h"
#include "data/data_loader.h"
#include "data/idx.h"
#include "data/pnm.h"
#include "data_test_files.h"

using namespace uwaga;
using namespace uwaga_test;
using Catch::Contains;

namespace {

void write_text(const std::string& path, const std::string& text) {
  write_bytes(path, Bytes(text.begin(), text.end()));
}

// The peak resident memory of this process so far, in megabytes (Linux reports kilobytes).
long peak_rss_mb() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

}  // namespace

TEST_CASE("pnm: a short file whose header promises a huge image costs no huge allocation",
          "[data][pnm][audit]") {
  TempDir dir;
  // 16384 x 16384 x 3 samples: 805 MB, which the reader used to allocate (and zero) before it
  // looked at the file's size. The peak can only grow if the reader touches that memory; when an
  // earlier test in the same process already peaked higher this check passes vacuously (CTest
  // runs each test case in a process of its own).
  const long before = peak_rss_mb();
  write_text(dir.file("huge.ppm"), "P6\n16384 16384\n255\n" + std::string(3, '\0'));
  REQUIRE_THROWS_WITH(read_pnm(dir.file("huge.ppm")),
                      Contains(dir.file("huge.ppm")) && Contains("truncated") &&
                          Contains("expected 805306368 pixel bytes, found 3"));
  write_text(dir.file("huge.pgm"), "P2\n16384 16384\n255\n1 2 3\n");
  REQUIRE_THROWS_WITH(read_pnm(dir.file("huge.pgm")),
                      Contains(dir.file("huge.pgm")) &&
                          Contains("expected 268435456 values, found 3"));
  CHECK(peak_rss_mb() - before < 100);
}

TEST_CASE("pnm: 16-bit samples (maximum value above 255) are read and rescaled to bytes",
          "[data][pnm][audit]") {
  TempDir dir;
  // Binary: two bytes per sample, most significant first.
  write_text(dir.file("deep.pgm"), std::string("P5\n3 1\n65535\n") + char(0) + char(0) +
                                       char(0xff) + char(0xff) + char(0x80) + char(0x00));
  const ImageDataset deep = read_pnm(dir.file("deep.pgm"));
  REQUIRE(deep.width == 3);
  REQUIRE(deep.pixels == std::vector<std::uint8_t>{0, 255, 127});
  // Colour, maximum 1000: 1000 -> 255, 500 -> 127, 4 -> 1.
  write_text(dir.file("deep.ppm"), std::string("P6 1 1 1000\n") + char(0x03) + char(0xe8) +
                                       char(0x01) + char(0xf4) + char(0x00) + char(0x04));
  REQUIRE(read_pnm(dir.file("deep.ppm")).pixels == std::vector<std::uint8_t>{255, 127, 1});
  // Text: the same values as numbers.
  write_text(dir.file("deep-text.pgm"), "P2 3 1 65535 0 65535 32768\n");
  REQUIRE(read_pnm(dir.file("deep-text.pgm")).pixels == std::vector<std::uint8_t>{0, 255, 127});
  // A short 16-bit file counts bytes, two per sample.
  write_text(dir.file("short.pgm"), std::string("P5 2 1 65535\n") + char(1) + char(2) + char(3));
  REQUIRE_THROWS_WITH(read_pnm(dir.file("short.pgm")),
                      Contains("truncated") && Contains("expected 4 pixel bytes") &&
                          Contains("found 3"));
  // A sample above the maximum is refused as in 8-bit files.
  write_text(dir.file("over.pgm"), std::string("P5 1 1 1000\n") + char(0x03) + char(0xe9));
  REQUIRE_THROWS_WITH(read_pnm(dir.file("over.pgm")),
                      Contains("value 1001") && Contains("exceeds the maximum 1000"));
  // Netpbm's limit.
  write_text(dir.file("too-deep.pgm"), "P2 1 1 65536 0\n");
  REQUIRE_THROWS_WITH(read_pnm(dir.file("too-deep.pgm")),
                      Contains(dir.file("too-deep.pgm")) && Contains("maximum value 65536") &&
                          Contains("1..65535"));
}

TEST_CASE("pnm: what follows the maximum value of a binary image", "[data][pnm][audit]") {
  TempDir dir;
  // A comment right after it is legal; the newline that ends the comment is then the one
  // white-space byte before the samples (as libnetpbm reads it).
  write_text(dir.file("comment.pgm"),
             std::string("P5\n2 1\n255# written by an image tool\n") + char(7) + char(9));
  REQUIRE(read_pnm(dir.file("comment.pgm")).pixels == std::vector<std::uint8_t>{7, 9});
  // Anything else would shift every pixel by a byte and go unnoticed.
  write_text(dir.file("glued.pgm"), std::string("P5\n2 1\n255") + "X" + char(7) + char(9));
  REQUIRE_THROWS_WITH(read_pnm(dir.file("glued.pgm")),
                      Contains(dir.file("glued.pgm")) && Contains("malformed header") &&
                          Contains("white-space byte after the maximum value"));
}

TEST_CASE("idx: images of no rows or no columns are refused, naming the file",
          "[data][idx][audit]") {
  TempDir dir;
  write_bytes(dir.file("labels"), idx_labels({1, 2}));
  write_bytes(dir.file("no-rows"), idx_images(2, 0, 28));
  REQUIRE_THROWS_WITH(load_idx(dir.file("no-rows"), dir.file("labels")),
                      Contains(dir.file("no-rows")) && Contains("images of 0 x 28 pixels"));
  write_bytes(dir.file("no-columns"), idx_images(2, 28, 0));
  REQUIRE_THROWS_WITH(read_idx_images(dir.file("no-columns")),
                      Contains(dir.file("no-columns")) && Contains("images of 28 x 0 pixels"));
}

TEST_CASE("idx: a file of no images is not a dataset", "[data][idx][audit]") {
  TempDir dir;
  write_bytes(dir.file("images"), idx_images(0, 28, 28));
  write_bytes(dir.file("labels"), idx_labels({}));
  // The reader itself accepts it: a valid IDX file.
  REQUIRE(read_idx_images(dir.file("images")).count == 0);
  REQUIRE_THROWS_WITH(load_idx(dir.file("images"), dir.file("labels")),
                      Contains(dir.file("images")) && Contains("holds no images"));
}

TEST_CASE("idx: rows x columns beyond a signed 64-bit product is a truncated file",
          "[data][idx][audit]") {
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

TEST_CASE("DataLoader: a batch size near the int64 limit is one batch of every image",
          "[data][loader][audit]") {
  // batches_per_epoch used to compute (n + B - 1) / B, which overflows (undefined behaviour; in
  // practice a negative count, so the loader refused "no full batch ... with drop_last" although
  // drop_last was off). uwaga-vit eval takes --batch-size as given.
  ImageDataset data;
  data.count = 3;
  data.channels = 1;
  data.height = 2;
  data.width = 2;
  data.pixels.assign(12, 7);
  data.labels = {0, 1, 0};
  data.class_names = {"a", "b"};
  DataLoaderOptions options;
  options.batch_size = std::numeric_limits<std::int64_t>::max();
  DataLoader loader(data, options);
  REQUIRE(loader.batches_per_epoch() == 1);
  REQUIRE(loader.batch(0, 0).indices == std::vector<std::int64_t>{0, 1, 2});
  options.drop_last = true;
  REQUIRE_THROWS_WITH(DataLoader(data, options), Contains("make no full batch"));
}
