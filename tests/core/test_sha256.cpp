#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "core/sha256.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using Catch::Contains;

TEST_CASE("SHA-256 gives FIPS 180-4's test vectors", "[core][sha256]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a's, fed in uneven pieces: the block boundaries fall inside updates.
  Sha256 h;
  const std::string piece(997, 'a');
  std::size_t left = 1000000;
  while (left > 0) {
    const std::size_t n = std::min(left, piece.size());
    h.update(std::string_view(piece.data(), n));
    left -= n;
  }
  CHECK(h.hex_digest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256_of_file hashes a file and refuses what is not one", "[core][sha256]") {
  testing::TempDir dir("sha256");
  std::ofstream(dir.file("abc")) << "abc";
  CHECK(sha256_of_file(dir.file("abc"), "x") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK_THROWS_WITH(sha256_of_file(dir.str(), "the model"), Contains("the model: is a directory"));
  CHECK_THROWS_WITH(sha256_of_file("/dev/zero", "z"), Contains("is a character device"));
}
