#include <catch2/catch.hpp>

#include <array>
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

TEST_CASE("sha256_compress agrees with the reference rounds, block for block", "[core][sha256]") {
  INFO("sha256_compress runs " << sha256_compress_path());
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;  // a splitmix-style stream of bytes
  std::string bytes(64 * 257, '\0');
  for (char& c : bytes) {
    x += 0x9e3779b97f4a7c15ULL;
    c = static_cast<char>((x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ULL >> 56);
  }
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (std::size_t blocks : {0, 1, 2, 3, 17, 257}) {
    std::array<std::uint32_t, 8> fast = {1, 2, 3, 4, 0xffffffffu, 0x80000000u, 7, 8};
    std::array<std::uint32_t, 8> slow = fast;
    sha256_compress(fast, p, blocks);
    sha256_compress_reference(slow, p, blocks);
    CHECK(fast == slow);
  }
  // And through Sha256: every length across two block boundaries, in one piece and byte by byte.
  for (std::size_t n = 0; n <= 130; ++n) {
    Sha256 whole, bytewise;
    whole.update(std::string_view(bytes.data(), n));
    for (std::size_t i = 0; i < n; ++i) bytewise.update(std::string_view(bytes.data() + i, 1));
    CHECK(whole.hex_digest() == bytewise.hex_digest());
  }
}
