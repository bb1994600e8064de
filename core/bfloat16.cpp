#include "core/bfloat16.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <cstdlib>
#include <cstring>

namespace uwaga {
namespace {

#if defined(__x86_64__)
// The AVX512-BF16 functions carry their instruction sets as a target attribute, so that only they
// need them: the library itself is built for whatever CPU the build is for, and they run only
// where cpu_has_avx512_bf16() said yes.
#define UWAGA_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

// 16 floats → 16 bfloat16 (the low half of a vcvtne2ps2bf16), `count` ≤ 16 of them read and
// written. The instruction flushes denormals to zero; a block holding one is left to the scalar
// rule, which rounds it (bfloat16 has the same denormals as float32's top half).
UWAGA_AVX512_BF16 void convert_block16(const float* in, bfloat16_bits* out, int count) {
  const __mmask16 lanes = static_cast<__mmask16>((1u << count) - 1u);
  const __m512 x = _mm512_maskz_loadu_ps(lanes, in);
  const __m512i bits = _mm512_castps_si512(x);
  const __mmask16 denormal = _mm512_testn_epi32_mask(bits, _mm512_set1_epi32(0x7F800000)) &
                             _mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x7FFFFFFF)) & lanes;
  if (denormal) {
    for (int i = 0; i < count; ++i) out[i] = float_to_bfloat16(in[i]);
    return;
  }
  const __m256i h = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x));
  _mm256_mask_storeu_epi16(out, lanes, h);
}

UWAGA_AVX512_BF16 void float_to_bfloat16_avx512(const float* in, bfloat16_bits* out,
                                                std::int64_t n) {
  const __m512i exponent = _mm512_set1_epi32(0x7F800000), magnitude = _mm512_set1_epi32(0x7FFFFFFF);
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 lo = _mm512_loadu_ps(in + i), hi = _mm512_loadu_ps(in + i + 16);
    const __m512i lo_bits = _mm512_castps_si512(lo), hi_bits = _mm512_castps_si512(hi);
    const __mmask16 denormal = (_mm512_testn_epi32_mask(lo_bits, exponent) &
                                _mm512_test_epi32_mask(lo_bits, magnitude)) |
                               (_mm512_testn_epi32_mask(hi_bits, exponent) &
                                _mm512_test_epi32_mask(hi_bits, magnitude));
    if (denormal) {
      for (std::int64_t j = i; j < i + 32; ++j) out[j] = float_to_bfloat16(in[j]);
      continue;
    }
    // cvtne2ps(a, b): the low 16 results are b's, the high 16 a's.
    _mm512_storeu_si512(out + i, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo)));
  }
  for (; i < n; i += 16) convert_block16(in + i, out + i, static_cast<int>(n - i < 16 ? n - i : 16));
}

#undef UWAGA_AVX512_BF16
#endif  // __x86_64__

}  // namespace

bool cpu_has_avx512_bf16() {
  static const bool has = [] {
    const char* env = std::getenv("UWAGA_BF16_KERNEL");
    if (env && std::strcmp(env, "reference") == 0) return false;
#if !defined(__x86_64__)
    return false;
#else
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
#endif
  }();
  return has;
}

bool cpu_has_amx_bf16() {
  static const bool has = [] {
    const char* env = std::getenv("UWAGA_BF16_KERNEL");
    if (env && std::strcmp(env, "avx512-bf16") == 0) return false;
    if (!cpu_has_avx512_bf16()) return false;  // also says no under =reference
#if !defined(__x86_64__) || !defined(__linux__)
    return false;
#else
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    const bool amx_bf16 = (edx >> 22) & 1u, amx_tile = (edx >> 24) & 1u;
    if (!amx_bf16 || !amx_tile) return false;
    // The tiles' 8 KiB of state (XFEATURE_XTILEDATA, 18) is saved on a context switch only for
    // processes that asked for it.
    constexpr long kReqXcompPerm = 0x1023, kXtileData = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXtileData) == 0;
#endif
  }();
  return has;
}

void float_to_bfloat16(const float* in, bfloat16_bits* out, std::int64_t n) {
#if defined(__x86_64__)
  if (cpu_has_avx512_bf16()) {
    float_to_bfloat16_avx512(in, out, n);
    return;
  }
#endif
  for (std::int64_t i = 0; i < n; ++i) out[i] = float_to_bfloat16(in[i]);
}

void bfloat16_to_float(const bfloat16_bits* in, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = bfloat16_to_float(in[i]);
}

void round_to_bfloat16(const float* in, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = round_to_bfloat16(in[i]);
}

}  // namespace uwaga
