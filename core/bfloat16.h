#pragma once
// bfloat16: the upper 16 bits of a float32 — its sign, its 8 exponent bits and the top 7 of its 23
// fraction bits. The range is float32's (no loss scaling is ever needed); the precision is 8
// significant bits: rounding moves a value by at most half a unit in its last place,
// |x − bf16(x)| ≤ 2⁻⁸·|x| (float32's is 2⁻²⁴).
//
// The rules, written once here:
//   float32 → bfloat16: round to nearest, ties to even, on the 16 bits dropped
//       (0x3F80'8000, exactly between 0x3F80 and 0x3F81, goes to the even 0x3F80);
//       a NaN stays a NaN, made quiet (the fraction's top bit set) so that rounding its payload
//       can never carry it into an infinity or clear it to an infinity's pattern;
//       ±inf stays ±inf; a float32 denormal rounds like any other value (to a bf16 denormal or ±0);
//       a value that rounds past the largest bf16 (0x7F7F) becomes ±inf, as IEEE rounding does.
//   bfloat16 → float32: exact, the 16 bits shifted up (every bfloat16 is a float32).
//   float64 → bfloat16: rounded once, to the bfloat16 nearest the double (double_to_bfloat16).
// These are the rules of PyTorch's torch.bfloat16 (tests/core/test_bfloat16.cpp checks them
// against its values) and of the AVX512-BF16 instruction vcvtne2ps2bf16 — except that the
// instruction flushes float32 denormals (|x| < 2⁻¹²⁶) to ±0, which the bulk conversion below
// corrects.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace uwaga {

// The 16 bits of a bfloat16. A plain integer: uwaga does no arithmetic on bfloat16 itself, only
// converts to float32 and multiplies there (core/bf16_gemm.h).
using bfloat16_bits = std::uint16_t;

// The readable conversion, one value at a time.
inline bfloat16_bits float_to_bfloat16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)         // NaN: keep sign and top payload, make it quiet
    return static_cast<bfloat16_bits>((bits >> 16) | 0x0040u);
  // Round to nearest even: add just under half a unit of the kept part, plus one when the kept
  // part is odd, then drop the low 16 bits. A carry out of the fraction increments the exponent,
  // which is the right result (up to the next binade, or to inf past the largest finite value).
  const std::uint32_t odd = (bits >> 16) & 1u;
  return static_cast<bfloat16_bits>((bits + 0x7FFFu + odd) >> 16);
}

inline float bfloat16_to_float(bfloat16_bits b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// float64 → bfloat16, rounded once: the bfloat16 nearest d, ties to even. Rounding to float32 and
// then to bfloat16 would round twice, which goes wrong just above a tie: 1 + 2⁻⁸ + 2⁻⁴⁰ becomes
// 1 + 2⁻⁸ in float32, exactly a tie, which goes to the even 1 — but the nearest bfloat16 is
// 1 + 2⁻⁷ (PyTorch 1.13 rounds twice and gives 1). The way out is to round to float32 *to odd*:
// truncate toward zero and, if anything was dropped, set the last bit. That last bit then says
// "not exactly here", which is all the second rounding needs to know, and float32's 24 bits are
// more than the 8 + 2 this needs (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums:
// proved algorithms using rounding to odd", IEEE Trans. Computers 2008).
inline bfloat16_bits double_to_bfloat16(double d) {
  float f = static_cast<float>(d);  // to nearest; a NaN stays a NaN, ±inf stays ±inf
  if (!std::isnan(d) && static_cast<double>(f) != d) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);  // truncate
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits |= 1u;  // something was dropped: odd
    std::memcpy(&f, &bits, 4);
  }
  return float_to_bfloat16(f);
}

// x rounded to bfloat16 and back: the float32 nearest to x that a bfloat16 holds.
inline float round_to_bfloat16(float f) { return bfloat16_to_float(float_to_bfloat16(f)); }

// n values at once, the same results as the functions above. On a CPU with AVX512-BF16 (checked
// at run time; the rest of the build stays generic) float → bfloat16 runs on vcvtne2ps2bf16,
// 32 values an instruction, and a block of 16 holding a denormal on the scalar rule; elsewhere
// all of it on the loop of the scalar rule, which the compiler vectorises.
void float_to_bfloat16(const float* in, bfloat16_bits* out, std::int64_t n);
void bfloat16_to_float(const bfloat16_bits* in, float* out, std::int64_t n);
void round_to_bfloat16(const float* in, float* out, std::int64_t n);

// Whether this CPU has the AVX512-BF16 instructions (and the AVX-512 F/BW/VL they extend), which
// core/bf16_gemm.cpp's kernel and the bulk conversion use. UWAGA_BF16_KERNEL=reference in the
// environment says no regardless (to run the fallback paths on such a CPU).
bool cpu_has_avx512_bf16();
// Whether this CPU has AMX-BF16 and AMX-TILE and the OS lets this process use the tiles (Linux
// asks each process to request them: arch_prctl(ARCH_REQ_XCOMP_PERM), done here once), besides
// AVX512-BF16 (core/bf16_gemm.cpp's AMX kernel packs and stores with it).
// UWAGA_BF16_KERNEL=avx512-bf16 or =reference says no.
bool cpu_has_amx_bf16();

}  // namespace uwaga
