// load_safetensors on arbitrary bytes: the length prefix, the JSON header, dtypes, shapes,
// offsets, metadata and checksums.
#include "core/safetensors.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = uwaga::fuzz::write_input(data, size);
  uwaga::fuzz::expect_error_or_success([&] {
    uwaga::SafetensorsFile f = uwaga::load_safetensors(path);
    // The header reader must agree with the full reader.
    const uwaga::SafetensorsHeader h = uwaga::read_safetensors_header(path);
    if (h.tensors.size() != f.tensors.size() || h.metadata != f.metadata) std::abort();
  });
  return 0;
}
