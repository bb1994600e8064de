#include "core/sha256.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/error.h"
#include "core/regular_file.h"

namespace uwaga {
namespace {

constexpr std::uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

#if defined(__x86_64__)
// The rounds above in the SHA extensions' instructions. They keep the eight words as two vectors,
// ABEF and CDGH; each sha256rnds2 does two rounds from two words of W + K, so four words (one
// vector of the schedule) take two of them. sha256msg1 and msg2 compute the schedule's
// W[i] = W[i−16] + σ0(W[i−15]) + W[i−7] + σ1(W[i−2]) four words at a time: msg1 the first two
// terms, an alignr the third, msg2 the σ1 term (which needs the words just made).
__attribute__((target("sha,sse4.1"))) void compress_sha_ni(std::array<std::uint32_t, 8>& state,
                                                            const unsigned char* p,
                                                            std::size_t blocks) {
  const __m128i big_endian = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0]));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4]));
  const __m128i badc = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(badc, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, badc, 0xF0);
  for (; blocks > 0; --blocks, p += 64) {
    const __m128i abef_before = abef, cdgh_before = cdgh;
    __m128i w[4];  // the schedule's last 16 words: w[g % 4] holds W[4g .. 4g + 3]
    for (int g = 0; g < 16; ++g) {
      __m128i& wg = w[g % 4];
      if (g < 4) {
        wg = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * g)),
                              big_endian);
      } else {
        const __m128i& w1 = w[(g + 1) % 4];  // W[4g − 12 ..], w[g % 4] still W[4g − 16 ..]
        const __m128i& w2 = w[(g + 2) % 4];  // W[4g − 8 ..]
        const __m128i& w3 = w[(g + 3) % 4];  // W[4g − 4 ..]
        wg = _mm_sha256msg2_epu32(
            _mm_add_epi32(_mm_sha256msg1_epu32(wg, w1), _mm_alignr_epi8(w3, w2, 4)), w3);
      }
      __m128i wk =
          _mm_add_epi32(wg, _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kRound[4 * g])));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);  // rounds 4g, 4g + 1
      wk = _mm_shuffle_epi32(wk, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);  // rounds 4g + 2, 4g + 3
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), hgfe);
}

bool cpu_has_sha_ni() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1");
  }();
  return has;
}
#endif  // __x86_64__

}  // namespace

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
             0x5be0cd19} {}

void sha256_compress_reference(std::array<std::uint32_t, 8>& state, const unsigned char* p,
                               std::size_t blocks) {
  for (; blocks > 0; --blocks, p += 64) {
    std::uint32_t w[64];  // the message schedule: the block's 16 words, then 48 mixed from them
    for (int i = 0; i < 16; ++i)
      w[i] = std::uint32_t(p[4 * i]) << 24 | std::uint32_t(p[4 * i + 1]) << 16 |
             std::uint32_t(p[4 * i + 2]) << 8 | std::uint32_t(p[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, h] = state;
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t t1 =
          h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
      const std::uint32_t t2 =
          (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    const std::uint32_t mixed[8] = {a, b, c, d, e, f, g, h};
    for (int i = 0; i < 8; ++i) state[i] += mixed[i];
  }
}

void Sha256::update(std::string_view bytes) {
  length_ += bytes.size();
  auto in = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t n = bytes.size();
  if (buffered_ > 0) {  // first complete the block begun by an earlier update
    const std::size_t take = std::min(n, 64 - buffered_);
    std::memcpy(buffer_ + buffered_, in, take);
    buffered_ += take, in += take, n -= take;
    if (buffered_ < 64) return;
    sha256_compress(state_, buffer_, 1);
    buffered_ = 0;
  }
  sha256_compress(state_, in, n / 64);  // whole blocks straight from the input
  std::memcpy(buffer_, in + n / 64 * 64, n % 64);
  buffered_ = n % 64;
}

void sha256_compress(std::array<std::uint32_t, 8>& state, const unsigned char* p,
                     std::size_t blocks) {
#if defined(__x86_64__)
  if (cpu_has_sha_ni()) return compress_sha_ni(state, p, blocks);
#endif
  sha256_compress_reference(state, p, blocks);
}

const char* sha256_compress_path() {
#if defined(__x86_64__)
  if (cpu_has_sha_ni()) return "sha-ni";
#endif
  return "reference";
}

std::string Sha256::hex_digest() {
  const std::uint64_t bits = length_ * 8;
  const char one = static_cast<char>(0x80);
  update(std::string_view(&one, 1));
  const char zero = 0;
  while (buffered_ != 56) update(std::string_view(&zero, 1));
  for (int i = 7; i >= 0; --i) {
    const char byte = static_cast<char>(bits >> (8 * i));
    update(std::string_view(&byte, 1));
  }
  char hex[65];
  for (int i = 0; i < 8; ++i) std::snprintf(hex + 8 * i, 9, "%08x", state_[i]);
  return std::string(hex, 64);
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex_digest();
}

std::string sha256_of_file(const std::string& path, const std::string& where) {
  FilePtr file = open_regular_file(path, where);
  Sha256 h;
  static thread_local char buffer[1 << 20];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) h.update({buffer, n});
  if (std::ferror(file.get())) fail(where, ": cannot read: ", std::strerror(errno));
  return h.hex_digest();
}

}  // namespace uwaga
