// A CIFAR-10 binary batch (records of 1 label byte + 3072 pixel bytes), raw or gzip.
#include "data/images/cifar10.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = uwaga::fuzz::write_input(data, size);
  uwaga::fuzz::expect_error_or_success([&] { uwaga::read_cifar10_batch(path); });
  return 0;
}
