// uwaga-vit's checkpoint loading (load_vit): the metadata, the run configuration in it, its check
// against the header's tensors, then the model built from it and the weights.
#include "apps/vit/vit_checkpoint.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = uwaga::fuzz::write_input(data, size);
  uwaga::fuzz::expect_error_or_success([&] { uwaga::apps::load_vit(path); });
  return 0;
}
