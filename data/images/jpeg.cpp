#include "data/images/jpeg.h"

#include <cerrno>
#include <csetjmp>
#include <cstdio>  // jpeglib.h uses FILE and size_t without including their headers
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <jpeglib.h>
// jerror.h after jpeglib.h: it names the warnings on_message tells apart.
#include <jerror.h>

#include "core/error.h"
#include "data/images/idx.h"

namespace uwaga {
namespace {

// libjpeg's error manager with a place to jump back to and the message of the error.
struct ErrorManager {
  jpeg_error_mgr pub;  // first, so libjpeg's jpeg_error_mgr* is also an ErrorManager*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

// libjpeg's error_exit, which must not return: keeps the message and jumps back to setjmp.
[[noreturn]] void jump_on_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*err->pub.format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// libjpeg's emit_message: level −1 is a warning about the data, higher levels are tracing. By
// default warnings go to stderr and decoding carries on; where the data is missing or damaged it
// carries on with grey or garbled pixels, which here is an error instead.
void on_message(j_common_ptr cinfo, int level) {
  if (level != -1) return;
  switch (cinfo->err->msg_code) {
    case JWRN_JPEG_EOF:             // the file ends early
    case JWRN_HIT_MARKER:           // a segment ends early
    case JWRN_HUFF_BAD_CODE:        // corrupt entropy-coded data
    case JWRN_ARITH_BAD_CODE:
    case JWRN_MUST_RESYNC:          // lost sync with the restart markers
    case JWRN_NOT_SEQUENTIAL:
    case JWRN_BOGUS_PROGRESSION:
      jump_on_error(cinfo);
    default:
      break;  // stray bytes between markers, unknown JFIF versions, bad ICC profiles: harmless
  }
}

void install_error_manager(jpeg_common_struct* cinfo, ErrorManager* err) {
  cinfo->err = jpeg_std_error(&err->pub);
  err->pub.error_exit = jump_on_error;
  err->pub.emit_message = on_message;
  err->message[0] = '\0';
}

struct Decoded {
  std::int64_t channels = 0, height = 0, width = 0;
  std::vector<std::uint8_t> interleaved;  // (H, W, C), as libjpeg writes rows
};

// The part of decoding that libjpeg may leave by longjmp. Nothing with a destructor is created
// in this frame (the pixels live in the caller's `out`), so the jump skips no destructor, and
// nothing set after setjmp is read after the jump. Returns false with err->message set when the
// data is refused.
bool run_decoder(jpeg_decompress_struct* cinfo, ErrorManager* err, const std::uint8_t* bytes,
                 std::size_t size, std::int64_t channels, std::int64_t max_pixels, Decoded* out) {
  install_error_manager(reinterpret_cast<jpeg_common_struct*>(cinfo), err);
  if (setjmp(err->jump)) {
    jpeg_destroy_decompress(cinfo);
    return false;
  }
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, bytes, static_cast<unsigned long>(size));
  jpeg_read_header(cinfo, TRUE);
  const auto width = static_cast<std::int64_t>(cinfo->image_width);
  const auto height = static_cast<std::int64_t>(cinfo->image_height);
  if (width * height > max_pixels) {
    std::snprintf(err->message, sizeof err->message,
                  "the image is %lld x %lld pixels, more than the limit of %lld",
                  static_cast<long long>(width), static_cast<long long>(height),
                  static_cast<long long>(max_pixels));
    jpeg_destroy_decompress(cinfo);
    return false;
  }
  const J_COLOR_SPACE stored = cinfo->jpeg_color_space;
  if (stored != JCS_GRAYSCALE && stored != JCS_YCbCr && stored != JCS_RGB) {
    std::snprintf(err->message, sizeof err->message,
                  "its colour space (libjpeg's J_COLOR_SPACE %d, %d components) is not "
                  "greyscale or colour; CMYK images are not supported",
                  static_cast<int>(stored), cinfo->num_components);
    jpeg_destroy_decompress(cinfo);
    return false;
  }
  const std::int64_t want = channels != 0 ? channels : (stored == JCS_GRAYSCALE ? 1 : 3);
  cinfo->out_color_space = want == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(cinfo);
  out->channels = cinfo->output_components;
  out->height = cinfo->output_height;
  out->width = cinfo->output_width;
  const std::int64_t stride = out->width * out->channels;
  out->interleaved.resize(static_cast<std::size_t>(out->height * stride));
  while (cinfo->output_scanline < cinfo->output_height) {
    JSAMPROW row = out->interleaved.data() + cinfo->output_scanline * stride;
    jpeg_read_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_decompress(cinfo);
  jpeg_destroy_decompress(cinfo);
  return true;
}

// The same for encoding; libjpeg allocates *buffer (malloc) and the caller frees it.
bool run_encoder(jpeg_compress_struct* cinfo, ErrorManager* err, const std::uint8_t* interleaved,
                 std::int64_t channels, std::int64_t height, std::int64_t width, int quality,
                 unsigned char** buffer, unsigned long* size) {
  install_error_manager(reinterpret_cast<jpeg_common_struct*>(cinfo), err);
  if (setjmp(err->jump)) {
    jpeg_destroy_compress(cinfo);
    return false;
  }
  jpeg_create_compress(cinfo);
  jpeg_mem_dest(cinfo, buffer, size);
  cinfo->image_width = static_cast<JDIMENSION>(width);
  cinfo->image_height = static_cast<JDIMENSION>(height);
  cinfo->input_components = static_cast<int>(channels);
  cinfo->in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(cinfo);
  jpeg_set_quality(cinfo, quality, TRUE);
  for (int c = 0; c < cinfo->num_components; ++c)  // 4:4:4, no chroma subsampling
    cinfo->comp_info[c].h_samp_factor = cinfo->comp_info[c].v_samp_factor = 1;
  jpeg_start_compress(cinfo, TRUE);
  const std::int64_t stride = width * channels;
  while (cinfo->next_scanline < cinfo->image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(interleaved + cinfo->next_scanline * stride);
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
  jpeg_destroy_compress(cinfo);
  return true;
}

}  // namespace

ImageDataset decode_jpeg(const std::uint8_t* bytes, std::size_t size, const std::string& what,
                         std::int64_t channels, std::int64_t max_pixels) {
  if (channels != 0 && channels != 1 && channels != 3)
    fail("decode_jpeg: ", what, ": channels ", channels, " (expected 0 for as stored, 1 or 3)");
  if (max_pixels < 1) fail("decode_jpeg: ", what, ": max_pixels ", max_pixels, " (expected >= 1)");
  // Every JPEG file starts with the SOI marker FF D8.
  if (size < 2 || bytes[0] != 0xFF || bytes[1] != 0xD8)
    fail(what, ": not a JPEG file (it does not start with the bytes FF D8)");
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  Decoded decoded;
  if (!run_decoder(&cinfo, &err, bytes, size, channels, max_pixels, &decoded))
    fail(what, ": cannot decode the JPEG data: ", err.message);
  ImageDataset image;
  image.count = 1;
  image.channels = decoded.channels;
  image.height = decoded.height;
  image.width = decoded.width;
  image.labels = {0};
  // (H, W, C) → (C, H, W)
  const std::int64_t C = image.channels, HW = image.height * image.width;
  image.pixels.resize(static_cast<std::size_t>(C * HW));
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t p = 0; p < HW; ++p) image.pixels[c * HW + p] = decoded.interleaved[p * C + c];
  return image;
}

ImageDataset read_jpeg(const std::string& path, std::int64_t channels, std::int64_t max_pixels) {
  const std::vector<std::uint8_t> bytes = read_file_bytes(path);
  return decode_jpeg(bytes.data(), bytes.size(), path, channels, max_pixels);
}

std::vector<std::uint8_t> encode_jpeg(const std::uint8_t* pixels, std::int64_t channels,
                                      std::int64_t height, std::int64_t width, int quality) {
  if (channels != 1 && channels != 3)
    fail("encode_jpeg: ", channels, " channels (expected 1 or 3)");
  if (height < 1 || width < 1 || height > 65500 || width > 65500)
    fail("encode_jpeg: an image of ", height, " x ", width, " (JPEG allows 1 .. 65500 per side)");
  if (quality < 1 || quality > 100) fail("encode_jpeg: quality ", quality, " (expected 1 .. 100)");
  // (C, H, W) → (H, W, C)
  const std::int64_t HW = height * width;
  std::vector<std::uint8_t> interleaved(static_cast<std::size_t>(channels * HW));
  for (std::int64_t c = 0; c < channels; ++c)
    for (std::int64_t p = 0; p < HW; ++p) interleaved[p * channels + c] = pixels[c * HW + p];
  jpeg_compress_struct cinfo;
  ErrorManager err;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const bool ok = run_encoder(&cinfo, &err, interleaved.data(), channels, height, width, quality,
                              &buffer, &size);
  std::vector<std::uint8_t> out;
  if (ok) out.assign(buffer, buffer + size);
  std::free(buffer);
  if (!ok) fail("encode_jpeg: ", err.message);
  return out;
}

void write_jpeg(const std::string& path, const std::uint8_t* pixels, std::int64_t channels,
                std::int64_t height, std::int64_t width, int quality) {
  const std::vector<std::uint8_t> bytes = encode_jpeg(pixels, channels, height, width, quality);
  std::ofstream out(path, std::ios::binary);
  if (!out) fail("write_jpeg: cannot create '", path, "': ", std::strerror(errno));
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("write_jpeg: writing '", path, "' failed");
}

}  // namespace uwaga
