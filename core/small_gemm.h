#pragma once
// uwaga's own kernel for the small float products of a small transformer: the pieces core/matmul.cpp
// cuts a linear layer's products into, and attention's products per head (65 × 65 × 24 and the
// like). OpenBLAS runs them with its small-matrix kernels where it has them (its SkylakeX core),
// and with its general path — copying ("packing") A and B first — where it has none (its Haswell
// and Zen cores, which AVX2 machines get); on the Intel server the small kernels themselves ran
// the per-head products at 50–80 GFLOP/s against 135–150 for a large sgemm
// (apps/bench/README.md).
//
// The kernel is the textbook one. C is cut into tiles of kRows rows by kCols columns (two
// vectors); a tile's sums stay in vector registers while k runs over the whole inner dimension:
//   for k:  C[i0 + r][j0 : j0 + kCols] += op(A)[i0 + r][k] · B[k][j0 : j0 + kCols]   (r < kRows)
// one row of B (two vector loads) and kRows broadcasts of op(A) feed 2·kRows fused multiply-adds.
// At the right edge a strip of at most one vector's width gets a tile one vector wide, and
// columns past N read a zero-padded copy of B's last strip; rows past M at the bottom edge get a
// tile of fewer rows. A and B are read in place otherwise (no packing). A larger
// product is cut into blocks of 256 inner steps and of rows, so that a tile's strip of B and a
// block's rows of A stay in the L1 cache while they are read again.
// small_sgemm_reference is the same product as three plain loops, to test it against.
#include <cstdint>

namespace uwaga {

// C = α·op(A)·B + β·C (+ row_bias on every row) for row-major float matrices: op(A) is M×K,
// A itself (lda apart) or, with trans_a, Aᵀ of a K×M matrix A; B is K×N (ldb apart); row_bias
// N values or null. With β = 0, C is only written (NaN or garbage in C does not reach the
// result), as BLAS has it.
void small_sgemm(bool trans_a, std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
                 const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float beta,
                 float* C, std::int64_t ldc, const float* row_bias = nullptr);
void small_sgemm_reference(bool trans_a, std::int64_t M, std::int64_t N, std::int64_t K,
                           float alpha, const float* A, std::int64_t lda, const float* B,
                           std::int64_t ldb, float beta, float* C, std::int64_t ldc,
                           const float* row_bias = nullptr);

// The tile this build's kernel uses (8 × 32 with AVX-512, 6 × 16 with AVX, 6 × 8 without), for
// tests that want every edge.
std::int64_t small_sgemm_tile_rows();
std::int64_t small_sgemm_tile_cols();

}  // namespace uwaga
