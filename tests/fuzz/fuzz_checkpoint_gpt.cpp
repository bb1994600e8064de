// uwaga-gpt's checkpoint loading (load_gpt): the metadata, the run configuration with its
// character vocabulary, its check against the header's tensors, then the model and the weights.
#include "apps/gpt/gpt_checkpoint.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = uwaga::fuzz::write_input(data, size);
  uwaga::fuzz::expect_error_or_success([&] { uwaga::apps::load_gpt(path); });
  return 0;
}
