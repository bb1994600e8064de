// JPEG photos through libjpeg: markers, sizes, colour spaces, entropy-coded data, truncation.
#include "data/images/jpeg.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Up to a million pixels: a photo's size, and quick enough to fuzz.
  constexpr std::int64_t kPixels = 1 << 20;
  uwaga::fuzz::expect_error_or_success([&] { uwaga::decode_jpeg(data, size, "input", 0, kPixels); });
  uwaga::fuzz::expect_error_or_success([&] { uwaga::decode_jpeg(data, size, "input", 3, kPixels); });
  return 0;
}
