// uwaga-translate's checkpoint loading (load_translator): the metadata, the run configuration with
// its vocabularies, its check against the header's tensors, then the model and the weights.
#include "apps/translate/translate_checkpoint.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = uwaga::fuzz::write_input(data, size);
  uwaga::fuzz::expect_error_or_success([&] { uwaga::apps::load_translator(path); });
  return 0;
}
