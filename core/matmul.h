#pragma once
// Matrix products through OpenBLAS (cblas_sgemm / cblas_dgemm), with a naive reference beside it.
#include "core/tensor.h"

namespace uwaga {

// matmul(a, b): (..., M, K) @ (..., K, N) -> (..., M, N). Batch dims broadcast. Both inputs need
// at least 2 dims.
//   dA = dC Bᵀ,  dB = Aᵀ dC   (with gemm's transpose flags: no transposed tensor is made; gemm
//   itself may copy a small Bᵀ to reach OpenBLAS's fast kernels, see core/matmul.cpp)
Tensor matmul(const Tensor& a, const Tensor& b);

// linear(x, W, b) = x Wᵀ + b, with x (..., in), W (out, in), b (out) or undefined: the
// affine map of nn::Linear as one node and one GEMM.
//   dx = dy W,  dW = dyᵀ x (summed over all leading dims),  db = Σ dy
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// C = alpha · op(A) op(B) + beta · C for row-major matrices, op(X) = X or Xᵀ; op(A) is M×K and
// op(B) is K×N; then row_bias (N values), when given, is added to every row of C. gemm calls
// BLAS; gemm_reference is three plain loops, kept to test it against. Under
// MatmulPrecision::bfloat16 (core/matmul_precision.h) the float gemm is bf16_gemm.
template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, T alpha,
          const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C,
          std::int64_t ldc, const T* row_bias = nullptr);
template <class T>
void gemm_reference(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
                    T alpha, const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta,
                    T* C, std::int64_t ldc, const T* row_bias = nullptr);

// How large (in multiply-adds) the pieces are that gemm cuts thin float products into for
// OpenBLAS's small-matrix kernels (core/matmul.cpp says why); 0 passes every product to OpenBLAS
// whole. The default is 100³; `uwaga-bench --gemm-piece-work` compares others on a machine
// (apps/bench/README.md has the measurements). The
// result of a product does not depend on it beyond float rounding.
void set_gemm_piece_work(std::int64_t multiply_adds);
std::int64_t gemm_piece_work();

// Which kernels run the small float products and the pieces: OpenBLAS's, or uwaga's own
// (core/small_gemm.h). Products with Bᵀ that gemm does not copy, and large ones, stay on
// OpenBLAS either way. The default follows OpenBLAS's core (core/blas_kernels.h): where it has
// small-matrix kernels (SkylakeX, on CPUs with AVX-512) they stay, since uwaga's were no faster
// on the Intel server; where it has none (Haswell or Zen, on AVX2 CPUs) OpenBLAS packs even the
// smallest product first, and uwaga's kernel trained the ViTs 5–24 % faster on a Zen 3 EPYC
// (apps/bench/README.md). The environment variable UWAGA_GEMM_KERNEL (openblas or uwaga)
// overrides the default for a program; `uwaga-bench --gemm-kernel` compares the two.
enum class GemmKernel { openblas, uwaga };
void set_gemm_kernel(GemmKernel kernel);
GemmKernel gemm_kernel();

}  // namespace uwaga
