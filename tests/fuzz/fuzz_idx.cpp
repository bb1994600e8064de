// The IDX readers (MNIST) on raw files and on gzip files: the first byte chooses. 'z': the rest is
// gzip-compressed here first, so the fuzzer explores what the header and data say rather than
// the deflate stream; otherwise the rest is the file as it is (a raw IDX file, or a gzip stream
// the fuzzer damages).
#include <zlib.h>

#include <vector>

#include "data/images/idx.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::vector<std::uint8_t> file(data + 1, data + size);
  if (data[0] == 'z') {
    uLongf n = compressBound(static_cast<uLong>(file.size())) + 32;
    std::vector<std::uint8_t> gz(n);
    z_stream zs{};
    if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
    zs.next_in = file.data();
    zs.avail_in = static_cast<uInt>(file.size());
    zs.next_out = gz.data();
    zs.avail_out = static_cast<uInt>(gz.size());
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) std::abort();
    gz.resize(zs.total_out);
    deflateEnd(&zs);
    file = std::move(gz);
  }
  const std::string& path = uwaga::fuzz::write_input(file.data(), file.size());
  uwaga::fuzz::expect_error_or_success([&] { uwaga::read_idx_images(path); });
  uwaga::fuzz::expect_error_or_success([&] { uwaga::read_idx_labels(path, 10); });
  return 0;
}
