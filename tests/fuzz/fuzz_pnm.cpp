// PGM and PPM images (P2, P3, P5, P6; the text header with comments, maxval, the pixels).
#include "data/images/pnm.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = uwaga::fuzz::write_input(data, size, ".pnm");
  uwaga::fuzz::expect_error_or_success([&] { uwaga::read_pnm(path); });
  return 0;
}
