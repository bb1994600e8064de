// The Netpbm reader (PGM / PPM, text and binary) on small files written here, right and broken:
// what is not a regular file, pixel values above the header's maximum, short pixel data, headers
// promising far more than the file holds, 16-bit samples, comments after the maximum value.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <filesystem>
#include <string>

#include "core/error.h"
#include "data/images/pnm.h"
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

TEST_CASE("pnm: text and binary images read as channel planes rescaled to 0..255", "[data][pnm]") {
  TempDir dir;
  write_text(dir.file("a.pgm"), "P2\n# a comment\n3 2\n15\n0 15 5\n10 15 0\n");
  const ImageDataset a = read_pnm(dir.file("a.pgm"));
  REQUIRE(a.channels == 1);
  REQUIRE(a.height == 2);
  REQUIRE(a.width == 3);
  REQUIRE(a.pixels == std::vector<std::uint8_t>{0, 255, 85, 170, 255, 0});

  write_text(dir.file("b.pgm"), std::string("P5 2 1 15\n") + char(15) + char(3));
  REQUIRE(read_pnm(dir.file("b.pgm")).pixels == std::vector<std::uint8_t>{255, 51});

  // write_pnm stores (H, W, C); read_pnm gives channel planes back.
  const std::vector<std::uint8_t> rgb = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // (3, 2, 2)
  write_pnm(dir.file("c.ppm"), rgb.data(), 3, 2, 2);
  const ImageDataset c = read_pnm(dir.file("c.ppm"));
  REQUIRE(c.channels == 3);
  REQUIRE(c.pixels == rgb);
}

TEST_CASE("pnm: a directory or a FIFO or a missing path is refused and named", "[data][pnm]") {
  TempDir dir;
  SECTION("directory") {
    std::filesystem::create_directory(dir.file("images.pgm"));
    REQUIRE_THROWS_AS(read_pnm(dir.file("images.pgm")), Error);
    REQUIRE_THROWS_WITH(read_pnm(dir.file("images.pgm")),
                        Contains(dir.file("images.pgm")) &&
                            Contains("is a directory, not an image"));
  }
  SECTION("FIFO: refused before it is opened, so the reader never blocks") {
    FifoWithWriter fifo(dir.file("pipe.pgm"));
    REQUIRE_THROWS_WITH(read_pnm(dir.file("pipe.pgm")),
                        Contains(dir.file("pipe.pgm")) && Contains("not a regular file"));
  }
  SECTION("missing") {
    REQUIRE_THROWS_WITH(read_pnm(dir.file("none.pgm")),
                        Contains(dir.file("none.pgm")) && Contains("no such file"));
  }
}

TEST_CASE("pnm: binary pixel bytes above the header's maximum are refused", "[data][pnm]") {
  TempDir dir;
  // 15 * 255 / 15 is fine; 255 * 255 / 15 would wrap around in a byte.
  write_text(dir.file("gray.pgm"), std::string("P5\n3 2\n15\n") + char(0) + char(15) + char(1) +
                                       char(2) + char(255) + char(3));
  REQUIRE_THROWS_WITH(read_pnm(dir.file("gray.pgm")),
                      Contains(dir.file("gray.pgm")) && Contains("value 255") &&
                          Contains("row 1, column 1") && Contains("exceeds the maximum 15"));
  // In colour the channel is named too: byte 4 is the green of pixel (0, 1).
  write_text(dir.file("rgb.ppm"), std::string("P6 2 1 100\n") + char(0) + char(100) + char(50) +
                                      char(1) + char(101) + char(2));
  REQUIRE_THROWS_WITH(read_pnm(dir.file("rgb.ppm")),
                      Contains(dir.file("rgb.ppm")) && Contains("value 101") &&
                          Contains("row 0, column 1, channel 1") &&
                          Contains("exceeds the maximum 100"));
  // The text formats say where, too.
  write_text(dir.file("text.pgm"), "P2 2 2 15 1 2 3 16");
  REQUIRE_THROWS_WITH(read_pnm(dir.file("text.pgm")),
                      Contains(dir.file("text.pgm")) && Contains("value 16") &&
                          Contains("row 1, column 1") && Contains("exceeds the maximum 15"));
}

TEST_CASE("pnm: short pixel data says how many values were expected and found", "[data][pnm]") {
  TempDir dir;
  write_text(dir.file("short.pgm"), "P2\n3 2\n255\n1 2 3\n4 5\n");
  REQUIRE_THROWS_WITH(read_pnm(dir.file("short.pgm")),
                      Contains(dir.file("short.pgm")) && Contains("pixel data is short") &&
                          Contains("expected 6 values, found 5"));
  write_text(dir.file("short.ppm"), "P3 1 1 255 10 20");
  REQUIRE_THROWS_WITH(read_pnm(dir.file("short.ppm")),
                      Contains("pixel data is short") && Contains("expected 3 values, found 2"));
  // Damage inside the pixel data is not blamed on the header.
  write_text(dir.file("bad.pgm"), "P2 2 1 255 7 x");
  REQUIRE_THROWS_WITH(read_pnm(dir.file("bad.pgm")),
                      Contains("malformed pixel data") && !Contains("header"));
  // The binary formats already said so; keep it that way.
  write_text(dir.file("short5.pgm"), std::string("P5 2 2 255\n") + char(1) + char(2));
  REQUIRE_THROWS_WITH(read_pnm(dir.file("short5.pgm")),
                      Contains("truncated") && Contains("expected 4 pixel bytes, found 2"));
}

TEST_CASE("pnm: a short file whose header promises a huge image costs no huge allocation",
          "[data][pnm]") {
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
          "[data][pnm]") {
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

TEST_CASE("pnm: what follows the maximum value of a binary image", "[data][pnm]") {
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
