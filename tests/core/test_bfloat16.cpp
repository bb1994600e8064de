// core/bfloat16.h: the rules by hand-computed bit patterns, the bulk conversion (AVX512-BF16 where
// the CPU has it) against the scalar one, and both against PyTorch 1.13
// (tests/golden/make_bfloat16_golden.py).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/bfloat16.h"
#include "tests/support/golden.h"

using namespace uwaga;
using namespace uwaga::testing;

namespace {

float float_of_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
std::uint32_t bits_of_float(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}
bool is_bf16_nan(bfloat16_bits b) { return (b & 0x7F80) == 0x7F80 && (b & 0x007F) != 0; }

// float32 bits → the bfloat16 bits the rules give, worked out by hand.
struct Case {
  std::uint32_t in;
  bfloat16_bits out;
  const char* why;
};
const Case kCases[] = {
    {0x00000000, 0x0000, "+0"},
    {0x80000000, 0x8000, "-0"},
    {0x3F800000, 0x3F80, "1 is exact"},
    {0xC0490FDB, 0xC049, "-pi rounds down (low half 0x0FDB < 0x8000)"},
    {0x3F808000, 0x3F80, "a tie goes to the even 0x3F80"},
    {0x3F818000, 0x3F82, "a tie goes to the even 0x3F82"},
    {0x3F808001, 0x3F81, "just above a tie rounds up"},
    {0x3F817FFF, 0x3F81, "just below a tie rounds down"},
    {0x3F80FFFF, 0x3F81, "rounds up within the binade"},
    {0x3FFFFFFF, 0x4000, "rounding up carries into the exponent: 2"},
    {0x7F7F7FFF, 0x7F7F, "the largest finite bfloat16"},
    {0x7F7F8000, 0x7F80, "a tie above the largest finite value goes to the even inf"},
    {0x7F7FFFFF, 0x7F80, "the largest float32 rounds to inf"},
    {0xFF7FFFFF, 0xFF80, "and its negative to -inf"},
    {0x7F800000, 0x7F80, "+inf"},
    {0xFF800000, 0xFF80, "-inf"},
    {0x7FC00000, 0x7FC0, "the quiet NaN"},
    {0x7F800001, 0x7FC0, "a signalling NaN whose payload is all in the dropped half: quieted, not inf"},
    {0x7FBFFFFF, 0x7FFF, "a signalling NaN: quieted, its top payload kept (no rounding into 0x7FC0)"},
    {0xFFC12345, 0xFFC1, "a negative NaN keeps its sign and top payload"},
    {0x00000001, 0x0000, "the smallest denormal rounds to +0"},
    {0x80008000, 0x8000, "a denormal tie goes to the even -0"},
    {0x00018000, 0x0002, "a denormal tie goes to the even 0x0002"},
    {0x00010001, 0x0001, "a denormal that stays a bfloat16 denormal"},
    {0x007FFFFF, 0x0080, "the largest denormal rounds up to the smallest normal"},
    {0x00800000, 0x0080, "the smallest normal"},
};

// The patterns above, each at every lane of a 48-value block: the bulk conversion's 32-value
// blocks, its 16-value tail and its denormal fallback all see each one.
std::vector<float> edge_values(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::size_t c = 0;
  for (float& x : v) x = float_of_bits(kCases[c++ % std::size(kCases)].in);
  return v;
}

}  // namespace

TEST_CASE("float32 to bfloat16 rounds to nearest even and keeps NaN a (quiet) NaN and inf inf",
          "[core][bf16]") {
  for (const Case& c : kCases) {
    INFO(c.why << ": 0x" << std::hex << c.in);
    CHECK(float_to_bfloat16(float_of_bits(c.in)) == c.out);
  }
}

TEST_CASE("bfloat16 to float32 is exact and the round trip gives back every bfloat16",
          "[core][bf16]") {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const float f = bfloat16_to_float(static_cast<bfloat16_bits>(b));
    REQUIRE(bits_of_float(f) == b << 16);
    if (is_bf16_nan(static_cast<bfloat16_bits>(b))) {
      // a NaN comes back a NaN with its sign and payload, quiet
      REQUIRE(float_to_bfloat16(f) == (b | 0x0040));
    } else {
      REQUIRE(float_to_bfloat16(f) == b);
    }
  }
  CHECK(round_to_bfloat16(1.0f + 1.0f / 512) == 1.0f);  // a tie to even
  CHECK(round_to_bfloat16(1.0f + 3.0f / 512) == 1.0f + 4.0f / 512);
}

TEST_CASE("the bulk conversions give the scalar ones' bits at every length and alignment",
          "[core][bf16]") {
  INFO("this CPU has AVX512-BF16: " << cpu_has_avx512_bf16());
  for (std::int64_t n : {0, 1, 15, 16, 17, 31, 32, 33, 47, 48, 64, 65, 100}) {
    for (std::int64_t offset : {0, 1, 5}) {
      std::vector<float> in = edge_values(n + offset);
      std::vector<bfloat16_bits> out(static_cast<std::size_t>(n + 1), 0xABCD);
      float_to_bfloat16(in.data() + offset, out.data(), n);
      for (std::int64_t i = 0; i < n; ++i) {
        INFO("n " << n << ", offset " << offset << ", value " << i << ": 0x" << std::hex
                  << bits_of_float(in[offset + i]));
        REQUIRE(out[i] == float_to_bfloat16(in[offset + i]));
      }
      CHECK(out[n] == 0xABCD);  // nothing written past n
      std::vector<float> rounded(static_cast<std::size_t>(n)), back(static_cast<std::size_t>(n));
      round_to_bfloat16(in.data() + offset, rounded.data(), n);
      bfloat16_to_float(out.data(), back.data(), n);
      for (std::int64_t i = 0; i < n; ++i) {
        REQUIRE(bits_of_float(rounded[i]) == static_cast<std::uint32_t>(out[i]) << 16);
        REQUIRE(bits_of_float(back[i]) == static_cast<std::uint32_t>(out[i]) << 16);
      }
    }
  }
  // A block of ordinary values with one denormal among them: the block still rounds the
  // denormal (vcvtne2ps2bf16 alone would flush it to 0).
  std::vector<float> block(64, 1.5f);
  block[37] = float_of_bits(0x00018000);
  std::vector<bfloat16_bits> out(64);
  float_to_bfloat16(block.data(), out.data(), 64);
  CHECK(out[37] == 0x0002);
  CHECK(out[36] == 0x3FC0);
}

TEST_CASE("float32 to bfloat16 agrees with PyTorch 1.13 on edge cases and random bit patterns",
          "[core][bf16][golden]") {
  const Golden g = load_golden("bfloat16_rounding");
  const Tensor in = g.get("input.float32_bits"), expected = g.get("output.bfloat16_bits");
  REQUIRE(in.numel() == expected.numel());
  REQUIRE(in.numel() > 5000);
  const std::int64_t* bits = in.data<std::int64_t>();
  const std::int64_t* want = expected.data<std::int64_t>();
  std::vector<float> values(static_cast<std::size_t>(in.numel()));
  for (std::int64_t i = 0; i < in.numel(); ++i)
    values[i] = float_of_bits(static_cast<std::uint32_t>(bits[i]));
  std::vector<bfloat16_bits> bulk(values.size());
  float_to_bfloat16(values.data(), bulk.data(), in.numel());
  std::int64_t nans = 0, denormals = 0;
  for (std::int64_t i = 0; i < in.numel(); ++i) {
    INFO("pattern " << i << ": 0x" << std::hex << bits[i] << " PyTorch 0x" << want[i]);
    const bfloat16_bits scalar = float_to_bfloat16(values[i]);
    REQUIRE(bulk[i] == scalar);
    if (std::isnan(values[i])) {
      // PyTorch writes a NaN of its own (0xFFFF); uwaga keeps the input's, quieted.
      REQUIRE(is_bf16_nan(static_cast<bfloat16_bits>(want[i])));
      REQUIRE(is_bf16_nan(scalar));
      ++nans;
    } else {
      REQUIRE(scalar == want[i]);
      if (std::fpclassify(values[i]) == FP_SUBNORMAL) ++denormals;
    }
  }
  CHECK(nans > 0);  // the golden covers them
  CHECK(denormals > 0);
}
