#pragma once
// PNG encoding of a byte image (data/images/image_ops.h): 8-bit greyscale for 1 channel, RGB for 3, rows
// unfiltered, deflated by zlib — the smallest writer that every viewer reads, for pictures the
// programs draw (uwaga-vit augment).
#include <string>

#include "data/images/image_ops.h"

namespace uwaga {

// The bytes of a PNG file holding `image` (C = 1 or 3, H and W from 1 to 2^31 − 1).
std::string encode_png(const ByteImage& image);

}  // namespace uwaga
