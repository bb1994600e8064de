#pragma once
// Netpbm images: PGM (P2 text, P5 binary; grayscale) and PPM (P3 text, P6 binary; RGB), with
// 8-bit or 16-bit samples (maximum value up to 65535), rescaled to bytes 0..255.
// The simplest formats that every image tool can write (`convert digit.png digit.pgm`).
#include <string>

#include "data/images/image_dataset.h"

namespace uwaga {

// One image as a dataset of count 1 (label 0, no class names), pixels (C, H, W),
// with C = 1 for PGM and 3 for PPM. Errors name the file and what is wrong with it.
ImageDataset read_pnm(const std::string& path);

// Writes a (C = 1 or 3, H, W) byte image as binary PGM / PPM.
void write_pnm(const std::string& path, const std::uint8_t* pixels, std::int64_t channels,
               std::int64_t height, std::int64_t width);

}  // namespace uwaga
