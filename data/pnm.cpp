#include "data/pnm.h"

#include <cctype>
#include <fstream>
#include <iterator>

#include "core/error.h"

namespace uwaga {
namespace {

// Reads the next header number, skipping white space and # comments.
long next_number(const std::string& bytes, std::size_t& pos, const std::string& path) {
  while (pos < bytes.size()) {
    if (bytes[pos] == '#') {
      while (pos < bytes.size() && bytes[pos] != '\n') ++pos;
    } else if (std::isspace(static_cast<unsigned char>(bytes[pos]))) {
      ++pos;
    } else {
      break;
    }
  }
  std::size_t start = pos;
  while (pos < bytes.size() && std::isdigit(static_cast<unsigned char>(bytes[pos]))) ++pos;
  if (start == pos || pos - start > 9)
    fail("read_pnm: '", path, "': malformed header (expected a number at byte ", start, ")");
  return std::stol(bytes.substr(start, pos - start));
}

}  // namespace

ImageDataset read_pnm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("read_pnm: cannot open '", path, "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 2 || bytes[0] != 'P' || std::string("2356").find(bytes[1]) == std::string::npos)
    fail("read_pnm: '", path, "' is not a PGM or PPM image (expected magic P2, P3, P5 or P6)");
  const char kind = bytes[1];
  std::size_t pos = 2;
  const long width = next_number(bytes, pos, path);
  const long height = next_number(bytes, pos, path);
  const long maxval = next_number(bytes, pos, path);
  if (width < 1 || height < 1 || width > 16384 || height > 16384)
    fail("read_pnm: '", path, "': implausible size ", width, "x", height);
  if (maxval < 1 || maxval > 255)
    fail("read_pnm: '", path, "': maximum value ", maxval, " is not supported (8-bit only)");
  ImageDataset image;
  image.count = 1;
  image.channels = (kind == '3' || kind == '6') ? 3 : 1;
  image.height = height;
  image.width = width;
  image.labels = {0};
  const std::int64_t n = image.channels * height * width;
  std::vector<std::uint8_t> interleaved(static_cast<std::size_t>(n));  // (H, W, C) as stored
  if (kind == '5' || kind == '6') {
    ++pos;  // the single white-space byte after maxval
    if (bytes.size() < pos + static_cast<std::size_t>(n))
      fail("read_pnm: '", path, "' is truncated: expected ", n, " pixel bytes, found ",
           bytes.size() > pos ? bytes.size() - pos : 0);
    for (std::int64_t i = 0; i < n; ++i) interleaved[i] = static_cast<std::uint8_t>(bytes[pos + i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i) {
      long v = next_number(bytes, pos, path);
      if (v > maxval) fail("read_pnm: '", path, "': value ", v, " exceeds the maximum ", maxval);
      interleaved[i] = static_cast<std::uint8_t>(v);
    }
  }
  // Rescale to 0..255 and reorder to channel planes (C, H, W).
  image.pixels.resize(static_cast<std::size_t>(n));
  for (std::int64_t c = 0; c < image.channels; ++c)
    for (std::int64_t p = 0; p < height * width; ++p)
      image.pixels[c * height * width + p] = static_cast<std::uint8_t>(
          interleaved[p * image.channels + c] * 255 / maxval);
  return image;
}

void write_pnm(const std::string& path, const std::uint8_t* pixels, std::int64_t channels,
               std::int64_t height, std::int64_t width) {
  if (channels != 1 && channels != 3) fail("write_pnm: ", channels, " channels (expected 1 or 3)");
  std::ofstream out(path, std::ios::binary);
  if (!out) fail("write_pnm: cannot write '", path, "'");
  out << (channels == 1 ? "P5" : "P6") << "\n" << width << " " << height << "\n255\n";
  for (std::int64_t p = 0; p < height * width; ++p)
    for (std::int64_t c = 0; c < channels; ++c)
      out.put(static_cast<char>(pixels[c * height * width + p]));
  if (!out) fail("write_pnm: writing '", path, "' failed");
}

}  // namespace uwaga
