#include "data/images/png.h"

#include <zlib.h>

#include "core/error.h"

namespace uwaga {
namespace {

void put_u32(std::string& out, std::uint32_t v) {  // big-endian, as PNG stores integers
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

// One chunk: length, type, data, and the CRC-32 of type and data.
void put_chunk(std::string& out, const char* type, const std::string& data) {
  put_u32(out, static_cast<std::uint32_t>(data.size()));
  const std::string body = std::string(type, 4) + data;
  out += body;
  put_u32(out, static_cast<std::uint32_t>(
                   crc32(0L, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
}

}  // namespace

std::string encode_png(const ByteImage& image) {
  const std::int64_t C = image.channels, H = image.height, W = image.width;
  if ((C != 1 && C != 3) || H < 1 || W < 1 || H > 0x7FFFFFFF || W > 0x7FFFFFFF ||
      static_cast<std::int64_t>(image.pixels.size()) != C * H * W)
    fail("encode_png: expected a (1 or 3, H, W) image with C·H·W pixels, got C ", C, ", H ", H,
         ", W ", W, " and ", image.pixels.size(), " pixels");
  // The raw data: each row is filter type 0 (none), then its pixels interleaved (R, G, B).
  std::string raw;
  raw.reserve(static_cast<std::size_t>(H * (1 + W * C)));
  for (std::int64_t y = 0; y < H; ++y) {
    raw.push_back('\0');
    for (std::int64_t x = 0; x < W; ++x)
      for (std::int64_t c = 0; c < C; ++c) raw.push_back(static_cast<char>(image.at(c, y, x)));
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string deflated(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(deflated.data()), &size,
                reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()),
                Z_BEST_COMPRESSION) != Z_OK)
    fail("encode_png: zlib could not compress ", raw.size(), " bytes");
  deflated.resize(size);

  std::string png = "\x89PNG\r\n\x1a\n";
  std::string header;
  put_u32(header, static_cast<std::uint32_t>(W));
  put_u32(header, static_cast<std::uint32_t>(H));
  header.push_back(8);                             // bits per sample
  header.push_back(static_cast<char>(C == 3 ? 2 : 0));  // colour type: RGB or greyscale
  header += std::string(3, '\0');                  // deflate, adaptive filtering, no interlace
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", deflated);
  put_chunk(png, "IEND", "");
  return png;
}

}  // namespace uwaga
