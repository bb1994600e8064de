#pragma once
// uwaga's own bfloat16 matrix product: C (float32) = α·op(A)·op(B) + β·C (+ row_bias), where
// op(A) and op(B) are float32 matrices rounded to bfloat16 (core/bfloat16.h) and every sum is
// accumulated in float32 — what PyTorch's bf16 autocast does to a matrix product on a CPU.
// Debian's OpenBLAS 0.3.21 has no sbgemm, so the kernel is ours.
//
// Two kernels: on CPUs with AMX (Intel Sapphire Rapids and later) the tile instruction tdpbf16ps,
// 8,192 multiply-adds at once (core/bf16_gemm.cpp, AmxKernel); elsewhere with AVX512-BF16 (Intel
// Cooper Lake, AMD Zen 4/5) the vector instruction vdpbf16ps, which the rest of this comment
// describes. The AVX512-BF16 kernel rests on that one instruction: for each of a vector's 16 float lanes,
//   acc[j] += a[2j]·b[2j] + a[2j+1]·b[2j+1]        (a, b: 32 bfloat16; products exact in float32)
// two multiply-adds per lane where float32's FMA does one. It wants the inner dimension in pairs:
// so A and B are first copied ("packed") into bfloat16 pairs, k = 2p and 2p + 1 side by side in
// one 32-bit word:
//   packed B, a strip of kCols columns:  for each pair p, kCols words (op(B)[2p][j], op(B)[2p+1][j])
//   packed A, a tile of kRows rows:      for each pair p, kRows words (op(A)[i][2p], op(A)[i][2p+1])
// An odd K gets a last pair with a zero; columns past N and rows past M are zeros too (their
// results are computed and not stored). A tile of kRows × kCols sums stays in registers (24 of
// the 32 zmm) while p runs: each step loads kCols/16 vectors of B, broadcasts kRows words of A and
// issues kRows·kCols/16 vdpbf16ps. Around it the blocking of a textbook GEMM (GotoBLAS's): K in
// blocks (of up to 768) whose strip of packed B stays near while every tile of a block of rows
// reads it, the block's packed rows staying in L2; the blocks of rows × blocks of columns are
// shared among the threads (core/threads.h).
//
// vdpbf16ps treats bfloat16 denormals (|x| < 2⁻¹²⁶) as zero and flushes denormal results to zero,
// whatever the MXCSR says; the reference does not, so the two differ there by less than
// K·2⁻¹²⁶ per sum. Elsewhere they differ only by the order of the float32 additions.
//
// On a CPU without AVX512-BF16 bf16_gemm rounds op(A) and op(B) to bfloat16 (kept as float32) and
// multiplies those with the float32 gemm (core/matmul.h): the same product to float32 rounding,
// at float32's speed.
#include <cstdint>

namespace uwaga {

// C = α·bf16(op(A))·bf16(op(B)) + β·C (+ row_bias on every row), row-major, as gemm (core/matmul.h)
// has it: op(A) is M×K (A, lda apart, or with trans_a Aᵀ of a K×M A), op(B) is K×N (B, ldb apart,
// or with trans_b Bᵀ of an N×K B). With β = 0, C is only written. The training products are
// NN (y = x·W and dx = dy·W), NT (y = x·Wᵀ, attention's Q·Kᵀ) and TN (dW = dyᵀ·x).
void bf16_gemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
               float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
               float beta, float* C, std::int64_t ldc, const float* row_bias = nullptr);

// The same product as three plain loops: each operand rounded to bfloat16, the products summed
// over k = 0 … K − 1 in that order in float32.
void bf16_gemm_reference(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N,
                         std::int64_t K, float alpha, const float* A, std::int64_t lda,
                         const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc,
                         const float* row_bias = nullptr);

// What bf16_gemm runs on a CPU without AVX512-BF16: op(A) and op(B) rounded to bfloat16 (kept as
// float32) and multiplied by the float32 gemm (core/matmul.h). Here to be tested on any CPU.
void bf16_gemm_via_float32(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N,
                           std::int64_t K, float alpha, const float* A, std::int64_t lda,
                           const float* B, std::int64_t ldb, float beta, float* C,
                           std::int64_t ldc, const float* row_bias = nullptr);

// Which path bf16_gemm takes on this CPU: "amx" (the tile kernel, where the CPU has AMX-BF16 and
// the OS lets the process use its tiles), "avx512-bf16" (uwaga's vector kernel) or "float32"
// (bfloat16-rounded operands through the float32 gemm). UWAGA_BF16_KERNEL in the environment
// narrows the choice (core/bfloat16.h): avx512-bf16 leaves AMX out, reference leaves both out.
const char* bf16_gemm_path();

// The two kernels themselves, for tests and benchmarks: call each only where the CPU has it
// (cpu_has_avx512_bf16, cpu_has_amx_bf16 in core/bfloat16.h).
void bf16_gemm_avx512_bf16(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N,
                           std::int64_t K, float alpha, const float* A, std::int64_t lda,
                           const float* B, std::int64_t ldb, float beta, float* C,
                           std::int64_t ldc, const float* row_bias = nullptr);
void bf16_gemm_amx(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
                   float alpha, const float* A, std::int64_t lda, const float* B,
                   std::int64_t ldb, float beta, float* C, std::int64_t ldc,
                   const float* row_bias = nullptr);

// The blocks of sums of the AVX512-BF16 kernel (its register tile, 8 × 48) and of the AMX kernel
// (four tiles, 32 × 32), for tests that want every edge.
std::int64_t bf16_gemm_tile_rows();
std::int64_t bf16_gemm_tile_cols();
std::int64_t bf16_gemm_amx_rows();
std::int64_t bf16_gemm_amx_cols();

}  // namespace uwaga
