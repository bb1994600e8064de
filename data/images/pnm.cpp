#include "data/images/pnm.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"

namespace uwaga {
namespace {

// Only a regular file can be an image; anything else is refused before it is opened, because
// opening a FIFO blocks until someone writes to it and reading a directory throws from inside
// the stream library.
void check_regular_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // follows symlinks
  if (status.type() == fs::file_type::not_found) fail("read_pnm: '", path, "': no such file");
  if (ec) fail("read_pnm: cannot open '", path, "': ", ec.message());
  if (status.type() == fs::file_type::directory)
    fail("read_pnm: '", path, "' is a directory, not an image");
  if (status.type() != fs::file_type::regular)
    fail("read_pnm: '", path, "' is not a regular file (a FIFO, socket or device), not an image");
}

std::string read_whole_file(const std::string& path) {
  check_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("read_pnm: cannot open '", path, "': ", std::strerror(errno));
  // libstdc++ reports a failed read() by throwing from the stream buffer, whatever the stream's
  // exception mask says.
  try {
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure& e) {
    fail("read_pnm: reading '", path, "' failed: ", e.what());
  }
}

// Skips white space and # comments.
void skip_space(const std::string& bytes, std::size_t& pos) {
  while (pos < bytes.size()) {
    if (bytes[pos] == '#') {
      while (pos < bytes.size() && bytes[pos] != '\n') ++pos;
    } else if (std::isspace(static_cast<unsigned char>(bytes[pos]))) {
      ++pos;
    } else {
      break;
    }
  }
}

// Reads the next number; `part` ("header", "pixel data") says where, for the message.
long next_number(const std::string& bytes, std::size_t& pos, const std::string& path,
                 const char* part) {
  skip_space(bytes, pos);
  std::size_t start = pos;
  while (pos < bytes.size() && std::isdigit(static_cast<unsigned char>(bytes[pos]))) ++pos;
  if (start == pos || pos - start > 9)
    fail("read_pnm: '", path, "': malformed ", part, " (expected a number at byte ", start, ")");
  return std::stol(bytes.substr(start, pos - start));
}

// "row 1, column 2" (and ", channel 0" in colour) of sample i of the (H, W, C) pixel data.
std::string sample_position(std::int64_t i, std::int64_t width, std::int64_t channels) {
  std::string where = "row " + std::to_string(i / channels / width) + ", column " +
                      std::to_string(i / channels % width);
  if (channels > 1) where += ", channel " + std::to_string(i % channels);
  return where;
}

}  // namespace

ImageDataset read_pnm(const std::string& path) {
  const std::string bytes = read_whole_file(path);
  if (bytes.size() < 2 || bytes[0] != 'P' || std::string("2356").find(bytes[1]) == std::string::npos)
    fail("read_pnm: '", path, "' is not a PGM or PPM image (expected magic P2, P3, P5 or P6)");
  const char kind = bytes[1];
  std::size_t pos = 2;
  const long width = next_number(bytes, pos, path, "header");
  const long height = next_number(bytes, pos, path, "header");
  const long maxval = next_number(bytes, pos, path, "header");
  if (width < 1 || height < 1 || width > 16384 || height > 16384)
    fail("read_pnm: '", path, "': implausible size ", width, "x", height);
  // Netpbm allows maxval up to 65535; above 255 each binary sample takes two bytes, big-endian
  // (what image tools write for 16-bit sources). Every sample is rescaled to 0..255 below.
  if (maxval < 1 || maxval > 65535)
    fail("read_pnm: '", path, "': maximum value ", maxval, " is out of range (1..65535)");
  ImageDataset image;
  image.count = 1;
  image.channels = (kind == '3' || kind == '6') ? 3 : 1;
  image.height = height;
  image.width = width;
  image.labels = {0};
  const std::int64_t n = image.channels * height * width;
  // (H, W, C) as stored. Filled value by value and allocated only once the file is known to hold
  // the data: a header promising 16384 x 16384 pixels must not cost 800 MB when the file is short.
  std::vector<std::uint16_t> interleaved;
  // Checked in both formats: a binary sample above maxval would wrap around when rescaled
  // (255 * 255 / 15 is not a byte).
  auto store = [&](std::int64_t i, long v) {
    if (v > maxval)
      fail("read_pnm: '", path, "': value ", v, " at ", sample_position(i, width, image.channels),
           " exceeds the maximum ", maxval, " given in the header");
    interleaved.push_back(static_cast<std::uint16_t>(v));
  };
  if (kind == '5' || kind == '6') {
    // Exactly one white-space byte separates maxval from the samples; a comment may come before
    // it ("255# note\n": its newline is that byte), and anything else would shift every pixel.
    if (pos < bytes.size() && bytes[pos] == '#')
      while (pos < bytes.size() && bytes[pos] != '\n') ++pos;
    if (pos < bytes.size() && !std::isspace(static_cast<unsigned char>(bytes[pos])))
      fail("read_pnm: '", path, "': malformed header (expected a white-space byte after the "
           "maximum value at byte ", pos, ")");
    ++pos;
    const std::int64_t sample_bytes = maxval > 255 ? 2 : 1;
    const std::size_t found = bytes.size() > pos ? bytes.size() - pos : 0;
    if (found < static_cast<std::size_t>(n * sample_bytes))
      fail("read_pnm: '", path, "' is truncated: expected ", n * sample_bytes, " pixel bytes",
           sample_bytes == 2 ? " (2 per sample for a maximum value above 255)" : "", ", found ",
           found);
    interleaved.reserve(static_cast<std::size_t>(n));
    const auto* samples = reinterpret_cast<const unsigned char*>(bytes.data() + pos);
    for (std::int64_t i = 0; i < n; ++i)
      store(i, sample_bytes == 2 ? (samples[2 * i] << 8) | samples[2 * i + 1] : samples[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i) {
      skip_space(bytes, pos);
      if (pos == bytes.size())
        fail("read_pnm: '", path, "': the pixel data is short: expected ", n, " values, found ", i);
      store(i, next_number(bytes, pos, path, "pixel data"));
    }
  }
  // Rescale to 0..255 and reorder to channel planes (C, H, W).
  image.pixels.resize(static_cast<std::size_t>(n));
  for (std::int64_t c = 0; c < image.channels; ++c)
    for (std::int64_t p = 0; p < height * width; ++p)
      image.pixels[c * height * width + p] = static_cast<std::uint8_t>(
          interleaved[static_cast<std::size_t>(p * image.channels + c)] * 255 / maxval);
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
