// The JPEG reader on small files encoded here with libjpeg: colour and grey images come back as
// they went in (to JPEG's precision), in the channels asked for; damaged, truncated, oversized and
// CMYK files are errors naming the file, and the process survives them (libjpeg's default error
// handler would exit()).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>

#include <jpeglib.h>

#include "core/error.h"
#include "data/images/jpeg.h"
#include "data_test_files.h"

using namespace uwaga;
using namespace uwaga_test;
using Catch::Contains;

namespace {

// A smooth (C, H, W) test image: JPEG keeps smooth images nearly exactly.
std::vector<std::uint8_t> gradient_image(std::int64_t C, std::int64_t H, std::int64_t W) {
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(C * H * W));
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t i = 0; i < H; ++i)
      for (std::int64_t j = 0; j < W; ++j)
        pixels[static_cast<std::size_t>((c * H + i) * W + j)] =
            static_cast<std::uint8_t>(40 + c * 50 + 4 * i + 3 * j);
  return pixels;
}

int max_difference(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  REQUIRE(a.size() == b.size());
  int worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// A CMYK JPEG, written with libjpeg directly (uwaga's encoder writes grey and RGB only).
Bytes cmyk_jpeg() {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = 8;
  cinfo.image_height = 8;
  cinfo.input_components = 4;
  cinfo.in_color_space = JCS_CMYK;
  jpeg_set_defaults(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<unsigned char> row(8 * 4, 128);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&cinfo, &r, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  Bytes out(buffer, buffer + size);
  std::free(buffer);
  return out;
}

// The offset of the frame header's height (SOF0: FF C0, length, precision, height, width).
std::size_t frame_size_offset(const Bytes& jpeg) {
  for (std::size_t i = 0; i + 9 < jpeg.size(); ++i)
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) return i + 5;
  FAIL("no SOF0 marker");
  return 0;
}

}  // namespace

TEST_CASE("jpeg: colour and grey images come back as they went in", "[data][jpeg]") {
  TempDir dir;
  const auto rgb = gradient_image(3, 12, 20);
  write_jpeg(dir.file("rgb.jpg"), rgb.data(), 3, 12, 20, 100);
  const ImageDataset colour = read_jpeg(dir.file("rgb.jpg"));
  REQUIRE(colour.count == 1);
  REQUIRE(colour.channels == 3);
  REQUIRE(colour.height == 12);
  REQUIRE(colour.width == 20);
  CHECK(max_difference(colour.pixels, rgb) <= 3);

  const auto grey = gradient_image(1, 9, 7);
  write_jpeg(dir.file("grey.jpg"), grey.data(), 1, 9, 7, 100);
  const ImageDataset g = read_jpeg(dir.file("grey.jpg"));
  REQUIRE(g.channels == 1);
  CHECK(max_difference(g.pixels, grey) <= 2);

  // Asked for RGB, a grey photo repeats its one channel; asked for grey, a colour one gives its
  // luma Y = 0.299 R + 0.587 G + 0.114 B.
  const ImageDataset g3 = read_jpeg(dir.file("grey.jpg"), 3);
  REQUIRE(g3.channels == 3);
  const std::size_t plane = 9 * 7;
  for (std::size_t p = 0; p < plane; ++p) {
    CHECK(g3.pixels[p] == g.pixels[p]);
    CHECK(g3.pixels[plane + p] == g.pixels[p]);
    CHECK(g3.pixels[2 * plane + p] == g.pixels[p]);
  }
  const ImageDataset c1 = read_jpeg(dir.file("rgb.jpg"), 1);
  REQUIRE(c1.channels == 1);
  const std::size_t n = 12 * 20;
  for (std::size_t p = 0; p < n; p += 17) {
    const double luma = 0.299 * rgb[p] + 0.587 * rgb[n + p] + 0.114 * rgb[2 * n + p];
    CHECK(std::abs(c1.pixels[p] - luma) <= 3);
  }

  // From bytes: the same image.
  const Bytes bytes = read_bytes(dir.file("rgb.jpg"));
  CHECK(decode_jpeg(bytes.data(), bytes.size(), "rgb bytes").pixels == colour.pixels);
}

TEST_CASE("jpeg: harmless warnings are ignored", "[data][jpeg]") {
  const auto rgb = gradient_image(3, 8, 8);
  const auto clean = encode_jpeg(rgb.data(), 3, 8, 8, 90);
  // Stray bytes before the end-of-image marker FF D9 (some COCO photos have them): libjpeg warns
  // "Corrupt JPEG data: 2 extraneous bytes before marker 0xd9" and decodes the image.
  Bytes stray(clean.begin(), clean.end() - 2);
  stray.insert(stray.end(), {0x00, 0x00, 0xFF, 0xD9});
  const ImageDataset a = decode_jpeg(clean.data(), clean.size(), "clean");
  const ImageDataset b = decode_jpeg(stray.data(), stray.size(), "stray");
  CHECK(a.pixels == b.pixels);
}

TEST_CASE("jpeg: damaged, truncated, oversized and CMYK files are errors naming the file",
          "[data][jpeg]") {
  TempDir dir;
  const auto rgb = gradient_image(3, 16, 16);
  const auto good = encode_jpeg(rgb.data(), 3, 16, 16, 90);
  auto refused = [&](const Bytes& bytes, const std::string& name, const std::string& message,
                     std::int64_t max_pixels = kMaxJpegPixels) {
    write_bytes(dir.file(name), bytes);
    CHECK_THROWS_WITH(read_jpeg(dir.file(name), 0, max_pixels),
                      Contains(dir.file(name)) && Contains(message));
  };
  CHECK_THROWS_WITH(read_jpeg(dir.file("missing.jpg")),
                    Contains(dir.file("missing.jpg")) && Contains("file not found"));
  refused(Bytes{}, "empty.jpg", "not a JPEG file");
  refused(Bytes{0x89, 'P', 'N', 'G', 13, 10, 26, 10}, "png.jpg", "not a JPEG file");
  // The first half: libjpeg would fill the missing rows with grey and only warn.
  refused(Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2)),
          "half.jpg", "Premature end of JPEG file");
  refused(Bytes(good.begin(), good.begin() + 4), "header.jpg", "cannot decode the JPEG data");
  // A header promising 60000 x 60000 pixels is refused before anything is allocated.
  Bytes huge = good;
  const std::size_t at = frame_size_offset(huge);
  huge[at] = huge[at + 2] = 0xEA;  // 0xEA60 = 60000, height then width
  huge[at + 1] = huge[at + 3] = 0x60;
  refused(huge, "huge.jpg", "60000 x 60000 pixels, more than the limit of 67108864");
  refused(good, "small_limit.jpg", "16 x 16 pixels, more than the limit of 100", 100);
  refused(cmyk_jpeg(), "cmyk.jpg", "CMYK images are not supported");
  // Sizes JPEG cannot hold, and other misuse.
  CHECK_THROWS_WITH(decode_jpeg(good.data(), good.size(), "x", 2), Contains("channels 2"));
  CHECK_THROWS_WITH(encode_jpeg(rgb.data(), 4, 2, 2), Contains("4 channels"));
  CHECK_THROWS_WITH(encode_jpeg(rgb.data(), 3, 0, 2), Contains("0 x 2"));
  CHECK_THROWS_WITH(encode_jpeg(rgb.data(), 3, 2, 2, 0), Contains("quality 0"));
  // Still alive, and the reader still works.
  CHECK(decode_jpeg(good.data(), good.size(), "good").width == 16);
}
