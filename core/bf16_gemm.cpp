#include "core/bf16_gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/bfloat16.h"
#include "core/matmul.h"
#include "core/threads.h"

namespace uwaga {
namespace {

// The kernel's functions carry AVX512-BF16 as a target attribute: only they need it, and they run
// only where cpu_has_avx512_bf16() said yes (core/bfloat16.h).
#define UWAGA_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

// The register tile: kRows × kCols sums, kRows·kCols/16 = 24 zmm registers of the 32, leaving
// room for the kCols/16 vectors of B and the broadcast of A.
constexpr int kRows = 8;
constexpr int kCols = 48;
constexpr int kLanes = 16;  // floats in a zmm register

// The blocks (core/bf16_gemm.h): Kernel::kInnerPairs pairs of the inner dimension at a time, and
// blocks of at most kBlockRows rows (their packed A in L2) by kBlockCols columns — the unit of
// work a thread takes.
constexpr std::int64_t kBlockRows = 256;
constexpr std::int64_t kStreamBytes = std::int64_t{2} << 20;  // results this large skip the caches
constexpr std::int64_t kSplitInnerFloats = std::int64_t{4} << 20;  // most the threads' partial sums hold
constexpr std::int64_t kBlockCols = 768;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A buffer of 32-bit words aligned to a cache line, so that a packed strip's vectors are too;
// it grows to the largest product seen and is reused.
class PackBuffer {
 public:
  std::uint32_t* get(std::int64_t words) {
    if (static_cast<std::int64_t>(data_.size()) < words + 16) data_.resize(words + 16);
    auto address = reinterpret_cast<std::uintptr_t>(data_.data());
    return data_.data() + ((64 - address % 64) % 64) / 4;
  }

 private:
  std::vector<std::uint32_t> data_;
};

#if defined(__x86_64__)
// 16 pair-words bf16(even[i]) | bf16(odd[i]) << 16 for i < n ≤ 16, zeros past n; without `odd`
// (the last pair of an odd depth) zeros in the high halves. vcvtneps2bf16 rounds to nearest even
// and reads a float32 denormal as zero: so do the kernels' dot products with a bfloat16 denormal,
// so the product is the same.
// The m-masked floats at x as bfloat16 in the low halves of 16 words (a function of its own, not
// a lambda: a lambda does not take its caller's target attribute).
UWAGA_AVX512_BF16 inline __m512i bfloat16_words16(const float* x, __mmask16 m) {
  const __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, x));
  return _mm512_maskz_cvtepu16_epi32(0xFFFF, reinterpret_cast<__m256i>(h));
}

UWAGA_AVX512_BF16 inline __m512i pair_words16(const float* even, const float* odd, int n) {
  const __mmask16 m = static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
  const __m512i lo = bfloat16_words16(even, m);
  if (!odd) return lo;
  return _mm512_or_si512(lo, _mm512_maskz_slli_epi32(0xFFFF, bfloat16_words16(odd, m), 16));
}

// The pair-words of one line whose k runs along memory: 2·n ≤ 32 floats from x become n words
// bf16(x[2q]) | bf16(x[2q+1]) << 16 (vcvtne2ps2bf16 lays 32 bfloat16 out in order; read as
// 32-bit words those are the pairs), zeros past `count` floats. A float32 denormal becomes zero,
// as in pair_words16.
UWAGA_AVX512_BF16 inline __m512i line_pair_words16(const float* x, std::int64_t count) {
  auto mask = [](std::int64_t n) {
    return static_cast<__mmask16>(n >= 16 ? 0xFFFFu : n <= 0 ? 0u : (1u << n) - 1u);
  };
  const __m512 lo = _mm512_maskz_loadu_ps(mask(count), x);
  const __m512 hi = _mm512_maskz_loadu_ps(mask(count - 16), x + 16);
  return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));  // low 16 from lo
}

// r[i][j] ↔ r[j][i] for a 16 × 16 block of 32-bit words in 16 registers: at each level b = 8, 4,
// 2, 1 the off-diagonal b × b blocks of every 2b × 2b block trade places — row i (bit b clear)
// takes row i + b's columns c − b where c has bit b, row i + b takes row i's columns c + b where
// it has not — four rounds of 16 two-source permutes instead of 256 scattered stores.
// One level b of it: `upper` picks row i's column c, or row i + b's column c − b where c has bit
// b (indices 16-31 name the second source); `lower` row i's column c + b, or row i + b's c.
UWAGA_AVX512_BF16 inline void transpose_level(__m512i r[16], int b, __m512i upper,
                                              __m512i lower) {
  for (int i = 0; i < 16; ++i)
    if (!(i & b)) {
      const __m512i top = r[i], bottom = r[i + b];
      r[i] = _mm512_permutex2var_epi32(top, upper, bottom);
      r[i + b] = _mm512_permutex2var_epi32(top, lower, bottom);
    }
}

UWAGA_AVX512_BF16 inline void transpose16x16(__m512i r[16]) {
  transpose_level(r, 8, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23),
                  _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
  transpose_level(r, 4, _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27),
                  _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31));
  transpose_level(r, 2, _mm512_setr_epi32(0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29),
                  _mm512_setr_epi32(2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31));
  transpose_level(r, 1, _mm512_setr_epi32(0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30),
                  _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31));
}

// Packs `depth` inner steps (k = 0 … depth − 1 from src) of `valid` ≤ W rows of op(A) or columns
// of op(B) (x) into pairs: dst[p·W + x] = bf16(X[2p][x]) | bf16(X[2p+1][x]) << 16, where X[k][x] is
// src[k·ld + x] or, with k_contiguous, src[x·ld + k]. Words past `valid` and the second half of a
// last odd pair are zeros. (Only the kernels call it, on CPUs with AVX512-BF16.)
UWAGA_AVX512_BF16 void pack_pairs(const float* src, std::int64_t ld, bool k_contiguous,
                                  std::int64_t depth, std::int64_t valid, int W,
                                  std::uint32_t* dst) {
  const std::int64_t pairs = ceil_div(depth, 2);
  if (!k_contiguous) {
    // Two rows of X at a time, 16 columns a step (W = 8: half a vector stored).
    for (std::int64_t p = 0; p < pairs; ++p) {
      const float* even = src + 2 * p * ld;
      const float* odd = 2 * p + 1 < depth ? even + ld : nullptr;
      for (int x = 0; x < W; x += kLanes) {
        const int n = static_cast<int>(std::clamp<std::int64_t>(valid - x, 0, kLanes));
        const __m512i words = pair_words16(even + x, odd ? odd + x : nullptr, n);
        const int lanes = std::min(kLanes, W - x);
        _mm512_mask_storeu_epi32(dst + p * W + x, static_cast<__mmask16>((1u << lanes) - 1u),
                                 words);
      }
    }
    return;
  }
  // k runs along memory: 16 lines' next 16 pair-words each (line_pair_words16), transposed in
  // registers into 16 pairs' words of the 16 lines. Lines past `valid` are zeros.
  for (int x0 = 0; x0 < W; x0 += kLanes) {
    const int lanes = std::min(kLanes, W - x0);
    const __mmask16 mask = static_cast<__mmask16>((1u << lanes) - 1u);
    for (std::int64_t p0 = 0; p0 < pairs; p0 += kLanes) {
      __m512i r[16];
      for (int l = 0; l < kLanes; ++l)
        r[l] = x0 + l < valid ? line_pair_words16(src + (x0 + l) * ld + 2 * p0, depth - 2 * p0)
                              : _mm512_setzero_si512();
      transpose16x16(r);
      for (int q = 0; q < kLanes && p0 + q < pairs; ++q)
        _mm512_mask_storeu_epi32(dst + (p0 + q) * W + x0, mask, r[q]);
    }
  }
}

// One tile: C[r][j] = α·Σ_p (a[p][r] · b[p][j]) + β·C[r][j] (+ bias[j]) for r < rows, j < cols,
// where each a·b is a pair's two products (vdpbf16ps). V = ⌈cols/16⌉ vectors of B are read: a
// strip at the right edge narrower than kCols costs only what it holds.
template <int V>
UWAGA_AVX512_BF16 void tile(std::int64_t pairs, const std::uint32_t* a, const std::uint32_t* b,
                            float alpha, float beta, float* C, std::int64_t ldc, int rows,
                            int cols, const float* bias) {
  __m512 acc[kRows][V];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  for (std::int64_t p = 0; p < pairs; ++p) {
    __m512bh bv[V];
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v)
      bv[v] = reinterpret_cast<__m512bh>(_mm512_load_si512(b + p * kCols + v * kLanes));
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512bh av = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(a[p * kRows + r])));
#pragma GCC unroll 3
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av, bv[v]);
    }
  }
  const __m512 alpha_v = _mm512_set1_ps(alpha), beta_v = _mm512_set1_ps(beta);
  // Unrolled, so that each acc[r][v] is a register named at compile time (a loop to a run-time
  // `rows` would keep the sums in memory, stored and loaded again around every tile).
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    if (r >= rows) break;
    float* c = C + r * ldc;
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v) {
      const int n = std::clamp(cols - v * kLanes, 0, kLanes);
      const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1u);
      __m512 out = alpha == 1.0f ? acc[r][v] : _mm512_mul_ps(alpha_v, acc[r][v]);
      if (beta != 0.0f)
        out = _mm512_fmadd_ps(beta_v, _mm512_maskz_loadu_ps(mask, c + v * kLanes), out);
      if (bias) out = _mm512_add_ps(out, _mm512_maskz_loadu_ps(mask, bias + v * kLanes));
      _mm512_mask_storeu_ps(c + v * kLanes, mask, out);
    }
  }
}

using TileFn = void (*)(std::int64_t, const std::uint32_t*, const std::uint32_t*, float, float,
                        float*, std::int64_t, int, int, const float*);
constexpr TileFn kTiles[3] = {&tile<1>, &tile<2>, &tile<3>};

// The AVX512-BF16 kernel as the blocked driver below wants it: pairs as they come, A and B packed
// pair by pair (pack_pairs), one register tile of kRows × kCols.
struct Avx512Bf16Kernel {
  static constexpr int kRows = uwaga::kRows, kCols = uwaga::kCols;
  // The inner dimension in blocks of up to 768 (384 pairs), as for AMX: a block of rows' packed A
  // is 384 KiB, in L2, and a strip of B 72 KiB, streamed from L2 at 16 bytes a cycle while
  // vdpbf16ps runs. 128 pairs (the strip in L1) cost GPT-2's products of k = 768 three round
  // trips of their sums through C: products 1.5× → 1.9× sgemm on Zen 5 (1 thread).
  static constexpr std::int64_t kInnerPairs = 384;
  static std::int64_t padded(std::int64_t pairs) { return pairs; }
  // `rows` rows of op(A), tile by tile (kRows each, the last padded with zeros).
  static void pack_a(const float* src, std::int64_t ld, bool k_contiguous, std::int64_t depth,
                     std::int64_t rows, std::int64_t pairs, std::uint32_t* dst) {
    for (std::int64_t i0 = 0; i0 < rows; i0 += kRows)
      pack_pairs(k_contiguous ? src + i0 * ld : src + i0, ld, k_contiguous, depth,
                 std::min<std::int64_t>(kRows, rows - i0), kRows, dst + i0 * pairs);
  }
  static void pack_b(const float* src, std::int64_t ld, bool k_contiguous, std::int64_t depth,
                     std::int64_t valid, std::int64_t, std::uint32_t* dst) {
    pack_pairs(src, ld, k_contiguous, depth, valid, kCols, dst);
  }
  static void begin() {}
  static void end() {}
  static void block(std::int64_t pairs, const std::uint32_t* a, const std::uint32_t* b,
                    float alpha, float beta, float* C, std::int64_t ldc, int rows, int cols,
                    const float* bias, bool /*stream*/) {
    kTiles[(cols + kLanes - 1) / kLanes - 1](pairs, a, b, alpha, beta, C, ldc, rows, cols, bias);
  }
};

// ---- AMX: the same product on the tile registers (Intel Sapphire Rapids and later) ------------
// Eight tile registers of 16 rows × 64 bytes. tdpbf16ps C, A, B: for a 16 × 16 tile of float sums
// C, a 16 × 32 tile of bfloat16 A (16 rows, 16 pairs of the inner dimension) and a B tile of 16
// pairs × 16 columns, each row of B one pair-word per column (pack_pairs' layout):
//   C[m][n] += Σ_p A[m][2p]·B[2p][n] + A[m][2p+1]·B[2p+1][n]        (512 multiply-adds per row)
// 8,192 multiply-adds in one instruction. A block of kAmxRows × kAmxCols = 32 × 32 sums takes
// four C tiles (0-3), two of A (4, 5: rows 0-15, 16-31) and two of B (6, 7: columns 0-15,
// 16-31): four tdpbf16ps for every four tile loads. A is packed row by row (each row's pairs
// side by side, the rows pairs_pad words apart); the inner dimension is padded with zero pairs
// to a multiple of 16. Like vdpbf16ps, tdpbf16ps reads bfloat16 denormals as zero.
#define UWAGA_AMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl")))

constexpr int kAmxRows = 32, kAmxCols = 32;
constexpr std::int64_t kTilePairs = 16;  // pairs of the inner dimension in one A or B tile

// The tiles' shapes (ldtilecfg's 64 bytes, palette 1): all eight 16 rows × 64 bytes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

struct AmxKernel {
  static constexpr int kRows = kAmxRows, kCols = kAmxCols;
  // The inner dimension in blocks of up to 768 (384 pairs: a block's sums leave the tiles once
  // for transformer widths up to 768, where 256 cost GPT-2's products three round trips through
  // C). A row tile's packed A is then 48 KiB, a block of rows 384 KiB: in L2.
  static constexpr std::int64_t kInnerPairs = 384;
  static std::int64_t padded(std::int64_t pairs) { return ceil_div(pairs, kTilePairs) * kTilePairs; }
  // `rows` rows of op(A), the tiles one after another — so row x at dst[x·pairs_pad]:
  // dst[x·pairs_pad + p] = (op(A)[x][2p], op(A)[x][2p+1]), zeros past `depth`, and whole rows of
  // zeros up to the next multiple of 32.
  UWAGA_AVX512_BF16 static void pack_a(const float* src, std::int64_t ld, bool k_contiguous,
                                       std::int64_t depth, std::int64_t rows,
                                       std::int64_t pairs_pad, std::uint32_t* dst) {
    auto* out = reinterpret_cast<bfloat16_bits*>(dst);  // row x's values at out[x·2·pairs_pad + k]
    // Zeros only where nothing is written below: past `depth` in each row, and the rows past
    // `rows` (the whole tile cleared first cost a second store of every word).
    for (std::int64_t x = 0; x < rows; ++x)
      std::memset(out + x * 2 * pairs_pad + depth, 0,
                  sizeof(bfloat16_bits) * static_cast<std::size_t>(2 * pairs_pad - depth));
    const std::int64_t padded_rows = ceil_div(rows, kRows) * kRows;
    std::memset(dst + rows * pairs_pad, 0,
                sizeof(std::uint32_t) * static_cast<std::size_t>((padded_rows - rows) * pairs_pad));
    if (k_contiguous) {
      for (std::int64_t x = 0; x < rows; ++x)
        float_to_bfloat16(src + x * ld, out + x * 2 * pairs_pad, depth);
      return;
    }
    // k along src's rows: two rows make 16 rows' pair-words of one pair (pair_words16); 16
    // pairs of them transposed in registers are 16 pairs of each of the 16 rows. The 32 rows
    // of src behind 16 pairs are read across all `rows` before the next 32: along memory.
    const std::int64_t pairs = ceil_div(depth, 2);
    for (std::int64_t p0 = 0; p0 < pairs; p0 += kLanes) {
      const int count = static_cast<int>(std::min<std::int64_t>(kLanes, pairs - p0));
      const __mmask16 pair_mask = static_cast<__mmask16>((1u << count) - 1u);
      for (std::int64_t x0 = 0; x0 < rows; x0 += kLanes) {
        const int n = static_cast<int>(std::min<std::int64_t>(kLanes, rows - x0));
        __m512i r[16];
        for (int q = 0; q < kLanes; ++q) {
          const std::int64_t p = p0 + q;
          const float* even = src + 2 * p * ld + x0;
          r[q] = q < count ? pair_words16(even, 2 * p + 1 < depth ? even + ld : nullptr, n)
                           : _mm512_setzero_si512();
        }
        transpose16x16(r);
        for (int l = 0; l < n; ++l)
          _mm512_mask_storeu_epi32(dst + (x0 + l) * pairs_pad + p0, pair_mask, r[l]);
      }
    }
  }
  static void pack_b(const float* src, std::int64_t ld, bool k_contiguous, std::int64_t depth,
                     std::int64_t valid, std::int64_t pairs_pad, std::uint32_t* dst) {
    const std::int64_t pairs = ceil_div(depth, 2);
    pack_pairs(src, ld, k_contiguous, depth, valid, kCols, dst);
    std::memset(dst + pairs * kCols, 0, sizeof(std::uint32_t) * kCols * (pairs_pad - pairs));
  }
  // A thread configures its tiles before its blocks and releases them after (the tile state is
  // per thread).
  UWAGA_AMX static void begin() {
    static const TileConfig config;
    _tile_loadconfig(&config);
  }
  UWAGA_AMX static void end() { _tile_release(); }
  // The products of a block's pairs, added to the sums in tiles 0-3.
  UWAGA_AMX static void multiply(std::int64_t pairs_pad, const std::uint32_t* a,
                                 const std::uint32_t* b) {
    const std::int64_t a_stride = pairs_pad * 4;  // bytes from one row of packed A to the next
    for (std::int64_t p0 = 0; p0 < pairs_pad; p0 += kTilePairs) {
      _tile_loadd(4, a + p0, a_stride);                    // rows 0-15, pairs p0 … p0 + 15
      _tile_loadd(5, a + 16 * pairs_pad + p0, a_stride);   // rows 16-31
      _tile_loadd(6, b + p0 * kCols, kCols * 4);           // columns 0-15
      _tile_loadd(7, b + p0 * kCols + 16, kCols * 4);      // columns 16-31
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  // With `stream` (C 64-byte aligned, ldc a multiple of 16) a whole block goes to C around the
  // caches.
  UWAGA_AMX static void block(std::int64_t pairs_pad, const std::uint32_t* a,
                              const std::uint32_t* b, float alpha, float beta, float* C,
                              std::int64_t ldc, int rows, int cols, const float* bias,
                              bool stream) {
    const std::int64_t c_stride = ldc * 4;  // bytes from one row of C to the next
    if (rows == kRows && cols == kCols && alpha == 1.0f &&
        (beta == 0.0f || (beta == 1.0f && !bias))) {
      // A whole block with nothing to scale: the sums start from what is added to them — C
      // itself (β = 1), the bias on every row (a tile load whose rows are 0 bytes apart) or
      // zero — and the tiles are stored straight into C.
      if (beta == 1.0f) {
        _tile_loadd(0, C, c_stride);
        _tile_loadd(1, C + 16, c_stride);
        _tile_loadd(2, C + 16 * ldc, c_stride);
        _tile_loadd(3, C + 16 * ldc + 16, c_stride);
      } else if (bias) {
        _tile_loadd(0, bias, 0);
        _tile_loadd(1, bias + 16, 0);
        _tile_loadd(2, bias, 0);
        _tile_loadd(3, bias + 16, 0);
      } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
      }
      multiply(pairs_pad, a, b);
      if (stream) {
        alignas(64) float sums[kRows][kCols];
        _tile_stored(0, &sums[0][0], kCols * 4);
        _tile_stored(1, &sums[0][16], kCols * 4);
        _tile_stored(2, &sums[16][0], kCols * 4);
        _tile_stored(3, &sums[16][16], kCols * 4);
        for (int r = 0; r < kRows; ++r) {
          _mm512_stream_ps(C + r * ldc, _mm512_load_ps(&sums[r][0]));
          _mm512_stream_ps(C + r * ldc + 16, _mm512_load_ps(&sums[r][16]));
        }
        return;
      }
      _tile_stored(0, C, c_stride);
      _tile_stored(1, C + 16, c_stride);
      _tile_stored(2, C + 16 * ldc, c_stride);
      _tile_stored(3, C + 16 * ldc + 16, c_stride);
      return;
    }
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    multiply(pairs_pad, a, b);
    alignas(64) float sums[kRows][kCols];
    _tile_stored(0, &sums[0][0], kCols * 4);
    _tile_stored(1, &sums[0][16], kCols * 4);
    _tile_stored(2, &sums[16][0], kCols * 4);
    _tile_stored(3, &sums[16][16], kCols * 4);
    const __m512 alpha_v = _mm512_set1_ps(alpha), beta_v = _mm512_set1_ps(beta);
    for (int r = 0; r < rows; ++r) {
      float* c = C + r * ldc;
      for (int v = 0; v < 2; ++v) {
        const int n = std::clamp(cols - v * kLanes, 0, kLanes);
        const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1u);
        const __m512 acc = _mm512_load_ps(&sums[r][v * kLanes]);
        __m512 out = alpha == 1.0f ? acc : _mm512_mul_ps(alpha_v, acc);
        if (beta != 0.0f)
          out = _mm512_fmadd_ps(beta_v, _mm512_maskz_loadu_ps(mask, c + v * kLanes), out);
        if (bias) out = _mm512_add_ps(out, _mm512_maskz_loadu_ps(mask, bias + v * kLanes));
        _mm512_mask_storeu_ps(c + v * kLanes, mask, out);
      }
    }
  }
};

#undef UWAGA_AMX

template <class Kernel>
void bf16_gemm_blocked(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N,
                       std::int64_t K, float alpha, const float* A, std::int64_t lda,
                       const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc,
                       const float* row_bias);

// A product of few blocks of rows × columns over a long inner dimension — GPT-2's dx = dy·W at
// 256 rows, through the head's 50,257 or the MLP's 3,072 — shared out along k instead: thread t
// multiplies its own near-equal range of k (multiples of 32: whole AMX tiles) into a buffer of
// its own, and the buffers are added, C = α·Σ_t C_t + β·C (+ bias). Blocks of rows × columns
// would leave threads idle, or fork and join once for every block of k.
template <class Kernel>
void bf16_gemm_split_inner(int threads, bool trans_a, bool trans_b, std::int64_t M,
                           std::int64_t N, std::int64_t K, float alpha, const float* A,
                           std::int64_t lda, const float* B, std::int64_t ldb, float beta,
                           float* C, std::int64_t ldc, const float* row_bias) {
  const std::int64_t unit = 32, units = ceil_div(K, unit);
  // Each thread writes its whole buffer (β = 0): left uninitialised, not zeroed first.
  const std::unique_ptr<float[]> partial(new float[static_cast<std::size_t>(threads * M * N)]);
  parallel_for(threads, true, [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t k0 = std::min(K, units * t / threads * unit);
      const std::int64_t k1 = std::min(K, units * (t + 1) / threads * unit);
      const float* a = trans_a ? A + k0 * lda : A + k0;  // op(A)[0][k0]
      const float* b = trans_b ? B + k0 : B + k0 * ldb;  // op(B)[k0][0]
      // (inside the threads' region the product runs on this thread alone)
      bf16_gemm_blocked<Kernel>(trans_a, trans_b, M, N, k1 - k0, 1.0f, a, lda, b, ldb, 0.0f,
                                partial.get() + t * M * N, N, nullptr);
    }
  });
  parallel_for(M, M * N > 4096, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        float sum = 0.0f;
        for (int t = 0; t < threads; ++t) sum += partial[(t * M + i) * N + j];
        float& c = C[i * ldc + j];
        c = alpha * sum + (beta == 0.0f ? 0.0f : beta * c) + (row_bias ? row_bias[j] : 0.0f);
      }
  });
}

// The blocked product around a Kernel's blocks of Kernel::kRows × kCols sums (core/bf16_gemm.h):
// the inner dimension in blocks of kInnerPairs pairs, each packed whole (op(B) in strips of kCols
// columns, op(A) in tiles of kRows rows), then the blocks of rows × columns shared among the
// threads, each running every strip of its columns (kept in L1) against every tile of its rows.
// Where the blocks span all the columns, each block of rows is met once: the thread that
// multiplies it packs its tiles of A just before, into its own L2, rather than all of A being
// packed first and read back from further away; where they span all the rows, each strip of B
// likewise (GPT-2's head: 256 rows against 50,257 columns).
template <class Kernel>
void bf16_gemm_blocked(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N,
                       std::int64_t K, float alpha, const float* A, std::int64_t lda,
                       const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc,
                       const float* row_bias) {
  constexpr int R = Kernel::kRows, Q = Kernel::kCols;
  constexpr std::int64_t kInnerPairs = Kernel::kInnerPairs;
  const std::int64_t tiles_m = ceil_div(M, R), strips_n = ceil_div(N, Q);
  // The blocks of rows × columns the threads share: nearly equal, and at least one each.
  const int threads = omp_in_parallel() ? 1 : num_threads();
  std::int64_t blocks_m = ceil_div(M, kBlockRows), blocks_n = ceil_div(N, kBlockCols);
  if (threads > 1 && blocks_m * blocks_n < 2 * threads && K >= threads * 2 * kInnerPairs &&
      threads * M * N <= kSplitInnerFloats) {
    bf16_gemm_split_inner<Kernel>(threads, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta,
                                  C, ldc, row_bias);
    return;
  }
  // (A tall product keeps its columns whole: one block of rows more on a thread costs less
  // than packing A twice.)
  while ((blocks_m * blocks_n) % threads != 0 && blocks_n < strips_n && blocks_m < 4 * threads)
    ++blocks_n;
  const std::int64_t rows_per_block = ceil_div(tiles_m, blocks_m) * R;
  const std::int64_t cols_per_block = ceil_div(strips_n, blocks_n) * Q;
  blocks_m = ceil_div(M, rows_per_block);
  blocks_n = ceil_div(N, cols_per_block);
  const bool worth_forking = M * N * std::max<std::int64_t>(K, 1) > 64 * 64 * 64;

  // A result larger than L2 written in one pass (β = 0, one block of the inner dimension) is
  // stored around the caches: a store into a line not in cache first reads it, and the reader
  // of so large a result finds it further away anyway (vit-d192's bf16 step 4–5 % faster,
  // GPT-2's at T 64 10 %). Far smaller results stay in cache for their reader.
  const bool stream_c = beta == 0.0f && K <= 2 * kInnerPairs &&
                        M * N * std::int64_t{sizeof(float)} >= kStreamBytes &&
                        reinterpret_cast<std::uintptr_t>(C) % 64 == 0 && ldc % 16 == 0;
  const bool a_in_blocks = blocks_n == 1;  // each block packs its own rows of A
  const bool b_in_blocks = blocks_m == 1;  // each block packs its own strips of B

  thread_local PackBuffer packed_a, packed_b;
  const std::int64_t max_pairs =
      Kernel::padded(std::min(kInnerPairs, ceil_div(std::max<std::int64_t>(K, 1), 2)));
  std::uint32_t* pa = a_in_blocks ? nullptr : packed_a.get(tiles_m * R * max_pairs);
  std::uint32_t* pb = b_in_blocks ? nullptr : packed_b.get(strips_n * Q * max_pairs);

  // K = 0 is an empty sum: one pass with no pairs gives C = β·C (+ bias).
  for (std::int64_t k0 = 0; k0 < K || k0 == 0; k0 += 2 * kInnerPairs) {
    const std::int64_t depth = std::min(K - k0, 2 * kInnerPairs);
    const std::int64_t pairs = Kernel::padded(ceil_div(depth, 2));
    const bool last = k0 + depth >= K;
    const float step_beta = k0 == 0 ? beta : 1.0f;  // later blocks add to the first's sums
    // The bias joins the sums once: with the first block where C is only written (where the AMX
    // kernel starts its tiles from it), else with the last.
    const float* bias = (beta == 0.0f ? k0 == 0 : last) ? row_bias : nullptr;

    // Pack this block of the inner dimension: every strip of B, every tile of A (or each
    // block its own, below).
    auto pack_strip_of_b = [&](std::int64_t j0, std::uint32_t* dst) {
      const float* src = trans_b ? B + j0 * ldb + k0 : B + k0 * ldb + j0;
      Kernel::pack_b(src, ldb, trans_b, depth, std::min<std::int64_t>(Q, N - j0), pairs, dst);
    };
    if (!b_in_blocks)
      parallel_for(strips_n, worth_forking, [&](std::int64_t s0, std::int64_t s1) {
        for (std::int64_t s = s0; s < s1; ++s) pack_strip_of_b(s * Q, pb + s * Q * pairs);
      });
    // The tiles of A from row i_begin to i_end, packed one after another into dst.
    auto pack_rows_of_a = [&](std::int64_t i_begin, std::int64_t i_end, std::uint32_t* dst) {
      const float* src = trans_a ? A + k0 * lda + i_begin : A + i_begin * lda + k0;
      Kernel::pack_a(src, lda, !trans_a, depth, i_end - i_begin, pairs, dst);
    };
    if (!a_in_blocks)
      parallel_for(tiles_m, worth_forking, [&](std::int64_t t0, std::int64_t t1) {
        pack_rows_of_a(t0 * R, std::min(M, t1 * R), pa + t0 * R * pairs);
      });

    parallel_for(blocks_m * blocks_n, worth_forking, [&](std::int64_t b0, std::int64_t b1) {
      Kernel::begin();
      for (std::int64_t blk = b0; blk < b1; ++blk) {
        const std::int64_t i_begin = (blk / blocks_n) * rows_per_block;
        const std::int64_t j_begin = (blk % blocks_n) * cols_per_block;
        const std::int64_t i_end = std::min(M, i_begin + rows_per_block);
        const std::int64_t j_end = std::min(N, j_begin + cols_per_block);
        const std::uint32_t* rows_a = pa ? pa + i_begin * pairs : nullptr;  // tile of row i_begin
        if (a_in_blocks) {
          thread_local PackBuffer block_a;
          std::uint32_t* own = block_a.get(rows_per_block * pairs);
          pack_rows_of_a(i_begin, i_end, own);
          rows_a = own;
        }
        for (std::int64_t j0 = j_begin; j0 < j_end; j0 += Q) {
          const int cols = static_cast<int>(std::min<std::int64_t>(Q, j_end - j0));
          const std::uint32_t* strip = pb ? pb + (j0 / Q) * Q * pairs : nullptr;
          if (b_in_blocks) {
            thread_local PackBuffer strip_b;
            std::uint32_t* own = strip_b.get(Q * pairs);
            pack_strip_of_b(j0, own);
            strip = own;
          }
          for (std::int64_t i0 = i_begin; i0 < i_end; i0 += R) {
            const int rows = static_cast<int>(std::min<std::int64_t>(R, i_end - i0));
            Kernel::block(pairs, rows_a + (i0 - i_begin) * pairs, strip, alpha, step_beta,
                          C + i0 * ldc + j0, ldc, rows, cols, bias ? bias + j0 : nullptr,
                          stream_c);
          }
        }
      }
      Kernel::end();
      if (stream_c) _mm_sfence();  // the streamed stores before anyone reads C
    });
    if (K == 0) break;
  }
}

}  // namespace

void bf16_gemm_avx512_bf16(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N,
                           std::int64_t K, float alpha, const float* A, std::int64_t lda,
                           const float* B, std::int64_t ldb, float beta, float* C,
                           std::int64_t ldc, const float* row_bias) {
  if (M <= 0 || N <= 0) return;
  bf16_gemm_blocked<Avx512Bf16Kernel>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C,
                                      ldc, row_bias);
}

void bf16_gemm_amx(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
                   float alpha, const float* A, std::int64_t lda, const float* B,
                   std::int64_t ldb, float beta, float* C, std::int64_t ldc,
                   const float* row_bias) {
  if (M <= 0 || N <= 0) return;
  bf16_gemm_blocked<AmxKernel>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                               row_bias);
}

namespace {

#endif  // __x86_64__

// op(X) rounded to bfloat16, kept as float32: `rows` lines of `cols` values, ld apart in X,
// packed tight.
std::vector<float> rounded_copy(const float* X, std::int64_t rows, std::int64_t cols,
                                std::int64_t ld) {
  std::vector<float> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) round_to_bfloat16(X + r * ld, out.data() + r * cols, cols);
  return out;
}

}  // namespace

std::int64_t bf16_gemm_tile_rows() { return kRows; }
std::int64_t bf16_gemm_tile_cols() { return kCols; }
std::int64_t bf16_gemm_amx_rows() { return kAmxRows; }
std::int64_t bf16_gemm_amx_cols() { return kAmxCols; }

const char* bf16_gemm_path() {
  return cpu_has_amx_bf16() ? "amx" : cpu_has_avx512_bf16() ? "avx512-bf16" : "float32";
}

void bf16_gemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
               float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
               float beta, float* C, std::int64_t ldc, const float* row_bias) {
  if (M <= 0 || N <= 0) return;
#if defined(__x86_64__)
  if (cpu_has_amx_bf16()) {
    bf16_gemm_amx(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, row_bias);
    return;
  }
  if (cpu_has_avx512_bf16()) {
    bf16_gemm_avx512_bf16(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                          row_bias);
    return;
  }
#endif
  bf16_gemm_via_float32(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, row_bias);
}

void bf16_gemm_via_float32(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N,
                           std::int64_t K, float alpha, const float* A, std::int64_t lda,
                           const float* B, std::int64_t ldb, float beta, float* C,
                           std::int64_t ldc, const float* row_bias) {
  if (M <= 0 || N <= 0) return;
  // Stored A is M×K (K×M with trans_a), stored B K×N (N×K with trans_b).
  const std::vector<float> a = trans_a ? rounded_copy(A, K, M, lda) : rounded_copy(A, M, K, lda);
  const std::vector<float> b = trans_b ? rounded_copy(B, N, K, ldb) : rounded_copy(B, K, N, ldb);
  gemm<float>(trans_a, trans_b, M, N, K, alpha, a.data(), trans_a ? M : K, b.data(),
              trans_b ? K : N, beta, C, ldc, row_bias);
}

void bf16_gemm_reference(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N,
                         std::int64_t K, float alpha, const float* A, std::int64_t lda,
                         const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc,
                         const float* row_bias) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (std::int64_t k = 0; k < K; ++k) {
        const float a = trans_a ? A[k * lda + i] : A[i * lda + k];  // op(A)[i][k]
        const float b = trans_b ? B[j * ldb + k] : B[k * ldb + j];  // op(B)[k][j]
        acc += round_to_bfloat16(a) * round_to_bfloat16(b);
      }
      float& c = C[i * ldc + j];
      c = alpha * acc + (beta == 0.0f ? 0.0f : beta * c) + (row_bias ? row_bias[j] : 0.0f);
    }
}

#undef UWAGA_AVX512_BF16

#if !defined(__x86_64__)
void bf16_gemm_avx512_bf16(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N,
                           std::int64_t K, float alpha, const float* A, std::int64_t lda,
                           const float* B, std::int64_t ldb, float beta, float* C,
                           std::int64_t ldc, const float* row_bias) {
  bf16_gemm_via_float32(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, row_bias);
}
void bf16_gemm_amx(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
                   float alpha, const float* A, std::int64_t lda, const float* B,
                   std::int64_t ldb, float beta, float* C, std::int64_t ldc,
                   const float* row_bias) {
  bf16_gemm_via_float32(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, row_bias);
}
#endif

}  // namespace uwaga
