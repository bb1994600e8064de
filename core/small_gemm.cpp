#include "core/small_gemm.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

namespace uwaga {
namespace {

// One vector of floats: 16 lanes (a zmm register) where the build has AVX-512, 8 (ymm) with AVX,
// else 4 (xmm). The tile holds 2·kRows vectors of sums: 16 of AVX-512's 32 registers, 12 of the
// 16 otherwise, leaving room for B's two vectors and the broadcast of op(A).
#if defined(__AVX512F__)
constexpr int kLanes = 16;
constexpr int kRows = 8;
#elif defined(__AVX__)
constexpr int kLanes = 8;
constexpr int kRows = 6;
#else
constexpr int kLanes = 4;
constexpr int kRows = 6;
#endif
constexpr int kCols = 2 * kLanes;
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);  // an unaligned vector load
  return v;
}
inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

// Rows i0 … i0 + R of C (A points at op(A)'s row i0), the V·kLanes columns B points at (ldb
// apart; a padded copy at the right edge, where only the first `cols` columns are stored).
//   acc[v][r] = Σ_k op(A)[r][k] · B[k][v-th vector]   then  C[r][:] = α·acc + β·C[r][:] (+ bias)
// V = 2 everywhere but at a right edge of at most kLanes columns, where one vector is enough.
template <int R, int V, bool kTransA>
void tile(std::int64_t K, float alpha, const float* A, std::int64_t lda, const float* B,
          std::int64_t ldb, float beta, float* C, std::int64_t ldc, std::int64_t cols,
          const float* bias) {
  Vec acc[V][R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[v][r] = Vec{};
  for (std::int64_t k = 0; k < K; ++k) {
    Vec b[V];
    for (int v = 0; v < V; ++v) b[v] = load(B + k * ldb + v * kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const float a = kTransA ? A[k * lda + r] : A[r * lda + k];  // op(A)[r][k]
      for (int v = 0; v < V; ++v) acc[v][r] += a * b[v];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* c = C + r * ldc;
    if (cols == V * kLanes) {
      for (int v = 0; v < V; ++v) {
        Vec out = alpha * acc[v][r];
        if (beta != 0.0f) out += beta * load(c + v * kLanes);
        if (bias) out += load(bias + v * kLanes);
        store(c + v * kLanes, out);
      }
    } else {
      float part[V * kLanes];
      for (int v = 0; v < V; ++v) store(part + v * kLanes, alpha * acc[v][r]);
      for (std::int64_t j = 0; j < cols; ++j)
        c[j] = (beta != 0.0f ? part[j] + beta * c[j] : part[j]) + (bias ? bias[j] : 0.0f);
    }
  }
}

using TileFn = void (*)(std::int64_t, float, const float*, std::int64_t, const float*,
                        std::int64_t, float, float*, std::int64_t, std::int64_t, const float*);

// tile<R, V, kTransA> for R = 1 … kRows, indexed by R − 1.
template <int V, bool kTransA, int... R>
constexpr auto tiles(std::integer_sequence<int, R...>) {
  return std::array<TileFn, sizeof...(R)>{&tile<R + 1, V, kTransA>...};
}
// [V − 1][kTransA][R − 1]
constexpr std::array<std::array<std::array<TileFn, kRows>, 2>, 2> kTiles = {{
    {tiles<1, false>(std::make_integer_sequence<int, kRows>{}),
     tiles<1, true>(std::make_integer_sequence<int, kRows>{})},
    {tiles<2, false>(std::make_integer_sequence<int, kRows>{}),
     tiles<2, true>(std::make_integer_sequence<int, kRows>{})},
}};

// Larger products are cut so that what a tile reads again stays in the cache: the inner
// dimension into blocks of kInner (a strip of B, kInner × kCols floats, is read once per tile of
// rows), the rows into blocks whose rows of op(A) fill kBlockFloats (read once per strip). The
// pieces gemm gives the kernel (≤ 100³ multiply-adds) are rarely cut: blocks of 128 inner steps
// made a 54 × 96 × 192 piece slower, not faster.
constexpr std::int64_t kInner = 256;
constexpr std::int64_t kBlockFloats = 8192;

}  // namespace

std::int64_t small_sgemm_tile_rows() { return kRows; }
std::int64_t small_sgemm_tile_cols() { return kCols; }

void small_sgemm(bool trans_a, std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
                 const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float beta,
                 float* C, std::int64_t ldc, const float* row_bias) {
  if (M <= 0 || N <= 0) return;
  thread_local std::vector<float> edge;  // a strip of B at the right edge, padded with zeros
  // K = 0 is an empty sum: one pass with no inner steps gives C = β·C (+ bias).
  for (std::int64_t k0 = 0; k0 < K || k0 == 0; k0 += kInner) {
    const std::int64_t k1 = std::min(K, k0 + kInner), depth = k1 - k0;
    const bool last = k1 == K;
    const float step_beta = k0 == 0 ? beta : 1.0f;  // later blocks add to the first's sums
    const float* bias = last ? row_bias : nullptr;
    const std::int64_t block =
        std::max<std::int64_t>(kRows, kBlockFloats / std::max<std::int64_t>(depth, 1) / kRows * kRows);
    for (std::int64_t b0 = 0; b0 < M; b0 += block) {
      const std::int64_t b1 = std::min(M, b0 + block);
      for (std::int64_t j0 = 0; j0 < N; j0 += kCols) {
        const std::int64_t cols = std::min<std::int64_t>(kCols, N - j0);
        const int vectors = cols <= kLanes ? 1 : 2;  // the strip's width in vectors
        const std::int64_t width = vectors * kLanes;
        const float* strip = B + k0 * ldb + j0;
        std::int64_t strip_ld = ldb;
        const float* strip_bias = bias ? bias + j0 : nullptr;
        if (cols < width) {
          edge.assign(static_cast<std::size_t>(std::max<std::int64_t>(depth, 1) * width), 0.0f);
          for (std::int64_t k = 0; k < depth; ++k)
            std::memcpy(edge.data() + k * width, strip + k * ldb, cols * sizeof(float));
          strip = edge.data();
          strip_ld = width;
        }
        const auto& tiles_for = kTiles[vectors - 1][trans_a];
        for (std::int64_t i0 = b0; i0 < b1; i0 += kRows) {
          const std::int64_t rows = std::min<std::int64_t>(kRows, b1 - i0);
          const float* a = trans_a ? A + k0 * lda + i0 : A + i0 * lda + k0;
          tiles_for[rows - 1](depth, alpha, a, lda, strip, strip_ld, step_beta,
                              C + i0 * ldc + j0, ldc, cols, strip_bias);
        }
      }
    }
    if (K == 0) break;
  }
}

void small_sgemm_reference(bool trans_a, std::int64_t M, std::int64_t N, std::int64_t K,
                           float alpha, const float* A, std::int64_t lda, const float* B,
                           std::int64_t ldb, float beta, float* C, std::int64_t ldc,
                           const float* row_bias) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float acc = 0;
      for (std::int64_t k = 0; k < K; ++k)
        acc += (trans_a ? A[k * lda + i] : A[i * lda + k]) * B[k * ldb + j];
      C[i * ldc + j] = alpha * acc + (beta == 0.0f ? 0.0f : beta * C[i * ldc + j]) +
                       (row_bias ? row_bias[j] : 0.0f);
    }
}

}  // namespace uwaga
