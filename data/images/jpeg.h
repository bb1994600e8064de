#pragma once
// JPEG images through libjpeg (Debian's libjpeg62-turbo, package libjpeg-dev): the format of
// COCO's photos. Decoding checks the size in the header before allocating anything, so a crafted
// 20-byte file promising 65,000 × 65,000 pixels is refused instead of costing 12 GB. libjpeg
// reports errors by calling a function that must not return — by default it prints and calls
// exit() — so uwaga's error handler jumps back (setjmp / longjmp) and throws uwaga::Error instead.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/images/image_dataset.h"

namespace uwaga {

// The most pixels (width × height) a JPEG may have: 8192 × 8192, 64 times a COCO photo's.
inline constexpr std::int64_t kMaxJpegPixels = std::int64_t{1} << 26;

// One image as a dataset of count 1 (label 0, no class names), pixels (C, H, W) as bytes, like
// read_pnm. `channels`: 0 keeps what the file holds (1 for greyscale, 3 for colour), 1 converts to
// grey, 3 to RGB (a greyscale photo repeated in three channels). CMYK files are refused. Errors
// name `what` (the file): not a JPEG, damaged or truncated data, more than max_pixels pixels.
// Harmless warnings (stray bytes between markers, which some COCO photos have) are ignored; a
// file that ends early or whose data is corrupt is an error, never an image with grey rows.
ImageDataset decode_jpeg(const std::uint8_t* bytes, std::size_t size, const std::string& what,
                         std::int64_t channels = 0, std::int64_t max_pixels = kMaxJpegPixels);

// decode_jpeg of the file at `path`.
ImageDataset read_jpeg(const std::string& path, std::int64_t channels = 0,
                       std::int64_t max_pixels = kMaxJpegPixels);

// A (C = 1 or 3, H, W) byte image as JPEG bytes at `quality` (1 .. 100), 4:4:4 (no chroma
// subsampling), for tests and for looking at images.
std::vector<std::uint8_t> encode_jpeg(const std::uint8_t* pixels, std::int64_t channels,
                                      std::int64_t height, std::int64_t width, int quality = 95);
void write_jpeg(const std::string& path, const std::uint8_t* pixels, std::int64_t channels,
                std::int64_t height, std::int64_t width, int quality = 95);

}  // namespace uwaga
