#include "core/matmul.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "core/bf16_gemm.h"
#include "core/blas_kernels.h"
#include "core/graph.h"
#include "core/matmul_precision.h"
#include "core/small_gemm.h"
#include "core/threads.h"

namespace uwaga {

// ---- the two GEMMs ------------------------------------------------------------------------------

namespace {
CBLAS_TRANSPOSE flag(bool trans) { return trans ? CblasTrans : CblasNoTrans; }
int blas_int(std::int64_t v) { return static_cast<int>(std::max<std::int64_t>(v, 1)); }

void sgemm(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
           const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float beta,
           float* C, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, flag(ta), flag(tb), static_cast<int>(M), static_cast<int>(N),
              static_cast<int>(K), alpha, A, blas_int(lda), B, blas_int(ldb), beta, C,
              blas_int(ldc));
}

// OpenBLAS multiplies a small product (M·N·K ≤ 100³ multiply-adds) with kernels that read A and
// B in place. A larger one first copies ("packs") both into a buffer it borrows from one pool for
// the whole process: for the thin matrices of a small transformer that copying is about a
// quarter of the time, and threads calling sgemm at once keep trading the pool's buffers (each
// then packs into memory the other core wrote last). So thin float products are cut into small
// ones:
//   NN (dx = dy·W):   blocks of rows,   C[i0:i1] = A[i0:i1]·B;
//   TN (dW = dyᵀ·x):  blocks of the inner dimension, each adding its part,
//                     C = β·C + Σ A[p0:p1]ᵀ·B[p0:p1]   (β on the first block, 1 after);
//   NT (y = x·Wᵀ, and attention's Q·Kᵀ per head): OpenBLAS's small kernels take this layout
//                     only when C has at most 1200 elements and K ≥ 32, so otherwise Bᵀ is
//                     copied once (B is small) and the product runs as NN blocks.
// Only where each block stays big enough to run at full speed. Measured on the reference ViT
// (uwaga-bench --mode train, side by side): about 10 % more images/s on one thread, 15 % on two.
// The pieces are at most kSmallKernelWork multiply-adds unless set_gemm_piece_work says otherwise
// (0: no cutting, every product goes to OpenBLAS whole).
constexpr std::int64_t kSmallKernelWork = 100 * 100 * 100;
std::atomic<std::int64_t> piece_work{kSmallKernelWork};
constexpr std::int64_t kMinBlock = 32;  // fewer rows (or inner steps) than this per block lose
constexpr std::int64_t kMaxTransposedB = 256 * 256;  // elements of Bᵀ copied for an NT product

// Which kernels run the small float products and the pieces: 0 OpenBLAS's, 1 uwaga's own
// (core/small_gemm.h), -1 not chosen yet (then UWAGA_GEMM_KERNEL, else the default: OpenBLAS's
// where its core has small-matrix kernels, uwaga's where it has none).
std::atomic<int> kernel_choice{-1};

bool own_kernel() {
  int k = kernel_choice.load(std::memory_order_relaxed);
  if (k < 0) {
    const char* env = std::getenv("UWAGA_GEMM_KERNEL");
    const std::string name = env ? env : "";
    if (name.empty()) k = blas_has_small_kernels() ? 0 : 1;
    else if (name == "openblas") k = 0;
    else if (name == "uwaga") k = 1;
    else fail("UWAGA_GEMM_KERNEL must be openblas or uwaga, got '", name, "'");
    kernel_choice.store(k, std::memory_order_relaxed);
  }
  return k == 1;
}

// One small product or piece (at most about kSmallKernelWork multiply-adds; the kernels for
// larger ones are OpenBLAS's), op(B) = B or Bᵀ: on uwaga's kernel when it is chosen and B is not
// transposed (gemm copies a small Bᵀ first), else on OpenBLAS's.
void sgemm_piece(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
                 const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float beta,
                 float* C, std::int64_t ldc) {
  if (!tb && own_kernel())
    small_sgemm(ta, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else
    sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

// [begin, end) of piece p when n items are cut into `pieces` nearly equal pieces.
std::int64_t cut(std::int64_t n, std::int64_t pieces, std::int64_t p) { return n * p / pieces; }

// C[i][j] += bias[j] for every row i < M (nothing when bias is null).
template <class T>
void add_row_bias(std::int64_t M, std::int64_t N, const T* bias, T* C, std::int64_t ldc) {
  if (!bias) return;
  for (std::int64_t i = 0; i < M; ++i) {
    T* row = C + i * ldc;
#pragma omp simd
    for (std::int64_t j = 0; j < N; ++j) row[j] += bias[j];
  }
}

// C[rows] = α·A[rows]·B + β·C[rows] (+ bias on each row), B row-major K×N, in blocks of at most
// `rows` rows. A block gets its bias right after its product, while it is still in the cache: a
// separate pass over all of C afterwards cost a linear layer's forward 5–13 % on the Intel server.
void sgemm_nn_blocks(std::int64_t rows, std::int64_t M, std::int64_t N, std::int64_t K,
                     float alpha, const float* A, std::int64_t lda, const float* B,
                     std::int64_t ldb, float beta, float* C, std::int64_t ldc, const float* bias) {
  const std::int64_t pieces = (M + rows - 1) / rows;
  for (std::int64_t p = 0; p < pieces; ++p) {
    const std::int64_t i0 = cut(M, pieces, p), i1 = cut(M, pieces, p + 1);
    sgemm_piece(false, false, i1 - i0, N, K, alpha, A + i0 * lda, lda, B, ldb, beta,
                C + i0 * ldc, ldc);
    add_row_bias(i1 - i0, N, bias, C + i0 * ldc, ldc);
  }
}

// Bᵀ (K×N, N apart) of an N×K matrix B, in a buffer of the calling thread's that the next call
// overwrites: bt[k·N + n] = B[n·ldb + k], by OpenBLAS's blocked transpose, 3–10× faster than that
// loop (which reads B a column at a time); a linear layer's forward transposes its weight once
// per micro-batch.
const float* transposed(std::int64_t N, std::int64_t K, const float* B, std::int64_t ldb) {
  thread_local std::vector<float> bt;  // grows to the largest B seen, then reused
  bt.resize(static_cast<std::size_t>(K * N));
  cblas_somatcopy(CblasRowMajor, CblasTrans, blas_int(N), blas_int(K), 1.0f, B, blas_int(ldb),
                  bt.data(), blas_int(N));
  return bt.data();
}

// The BLAS call itself, on whatever threads OpenBLAS chooses (one inside a parallel region),
// then the bias on every row of C.
void blas_gemm(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
               const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float beta,
               float* C, std::int64_t ldc, const float* bias) {
  if (M == 1) {
    // One row (a generated token at a time): a matrix-vector product. GEMM would first pack all
    // of B, which for one row costs more than the product itself.
    //   C (1×N) = α op(A) (1×K) · op(B) (K×N) + β C,  i.e.  c = α op(B)ᵀ a + β c
    // op(A)'s one row is A[0 …] (lda apart when transposed); B (N×K) with tb, else (K×N).
    const int inc_a = ta ? blas_int(lda) : 1;
    if (tb) cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(N), static_cast<int>(K),
                        alpha, B, blas_int(ldb), A, inc_a, beta, C, 1);
    else cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<int>(K), static_cast<int>(N), alpha,
                     B, blas_int(ldb), A, inc_a, beta, C, 1);
    add_row_bias(M, N, bias, C, ldc);
    return;
  }
  const bool small = M * N * K <= kSmallKernelWork;
  const std::int64_t piece = piece_work.load(std::memory_order_relaxed);
  if (piece > 0 && !ta && !tb && !small && N * K > 0) {
    const std::int64_t rows = piece / (N * K);
    if (rows >= kMinBlock) {
      sgemm_nn_blocks(rows, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, bias);
      return;
    }
  }
  const bool own = own_kernel();
  const bool nt_small_kernel = !own && small && M * N <= 1200 && K >= 32;  // OpenBLAS's rule
  if (!ta && tb && !nt_small_kernel && N * K > 0 && N * K <= kMaxTransposedB && (small || piece > 0)) {
    const std::int64_t rows = small ? M : piece / (N * K);
    if (small || rows >= kMinBlock) {
      sgemm_nn_blocks(rows, M, N, K, alpha, A, lda, transposed(N, K, B, ldb), N, beta, C, ldc,
                      bias);
      return;
    }
  }
  if (piece > 0 && !small && M * N > 0 && ta && !tb) {
    const std::int64_t inner = piece / (M * N);
    if (inner >= kMinBlock) {
      const std::int64_t pieces = (K + inner - 1) / inner;
      for (std::int64_t p = 0; p < pieces; ++p) {
        const std::int64_t p0 = cut(K, pieces, p), p1 = cut(K, pieces, p + 1);
        sgemm_piece(true, false, M, N, p1 - p0, alpha, A + p0 * lda, lda, B + p0 * ldb, ldb,
                    p == 0 ? beta : 1.0f, C, ldc);
      }
      add_row_bias(M, N, bias, C, ldc);
      return;
    }
  }
  if (small) sgemm_piece(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  add_row_bias(M, N, bias, C, ldc);
}

// float64 is for gradient checks, where speed matters less than a plain call.
void blas_gemm(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, double alpha,
               const double* A, std::int64_t lda, const double* B, std::int64_t ldb, double beta,
               double* C, std::int64_t ldc, const double* bias) {
  cblas_dgemm(CblasRowMajor, flag(ta), flag(tb), static_cast<int>(M), static_cast<int>(N),
              static_cast<int>(K), alpha, A, blas_int(lda), B, blas_int(ldb), beta, C,
              blas_int(ldc));
  add_row_bias(M, N, bias, C, ldc);
}

// Products smaller than this (in multiply-adds) run on one thread.
constexpr std::int64_t kParallelGemmWork = std::int64_t(1) << 20;

}  // namespace

void set_gemm_piece_work(std::int64_t multiply_adds) {
  if (multiply_adds < 0) fail("set_gemm_piece_work: expected a size >= 0, got ", multiply_adds);
  piece_work.store(multiply_adds, std::memory_order_relaxed);
}

std::int64_t gemm_piece_work() { return piece_work.load(std::memory_order_relaxed); }

void set_gemm_kernel(GemmKernel kernel) {
  kernel_choice.store(kernel == GemmKernel::uwaga ? 1 : 0, std::memory_order_relaxed);
}

GemmKernel gemm_kernel() {
  return own_kernel() ? GemmKernel::uwaga : GemmKernel::openblas;
}

// A transformer's matrices are tall and thin (2176 × 64 by 64 × 192 for the reference ViT), and
// OpenBLAS's own threading gains little on them. Splitting the M rows of C into one block per
// thread, each an independent single-threaded GEMM, scales as well as large products do:
// rows i0 … i1 of C need rows i0 … i1 of op(A) only, which start at A + i0·lda (A not transposed)
// or A + i0 (transposed: op(A)'s rows are A's columns).
template <class T>
void gemm(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, T alpha, const T* A,
          std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc,
          const T* row_bias) {
  if (M == 0 || N == 0) return;
  if (K == 0) {  // an empty sum: C = β C, not left to how each BLAS treats K = 0
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j)
        C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
    add_row_bias(M, N, row_bias, C, ldc);
    return;
  }
  init_threads();
  if constexpr (std::is_same_v<T, float>) {
    // Under MatmulPrecision::bfloat16 (core/matmul_precision.h) every float product of the models
    // (forward and gradients) comes through here, so this one branch makes them all bfloat16.
    // bf16_gemm shares out its own blocks among the threads.
    if (matmul_in_bfloat16()) {
      bf16_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, row_bias);
      return;
    }
    own_kernel();  // reads (or refuses) UWAGA_GEMM_KERNEL
  }
  const int threads = num_threads();
  if (threads == 1 || omp_in_parallel() || M < 2 * threads || M * N * K < kParallelGemmWork) {
    blas_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, row_bias);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    const std::int64_t i0 = M * t / n, i1 = M * (t + 1) / n;
    if (i1 > i0)
      blas_gemm(ta, tb, i1 - i0, N, K, alpha, ta ? A + i0 : A + i0 * lda, lda, B, ldb, beta,
                C + i0 * ldc, ldc, row_bias);
  }
}
template void gemm<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t, float,
                          const float*, std::int64_t, const float*, std::int64_t, float, float*,
                          std::int64_t, const float*);
template void gemm<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t, double,
                           const double*, std::int64_t, const double*, std::int64_t, double,
                           double*, std::int64_t, const double*);

template <class T>
void gemm_reference(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, T alpha,
                    const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C,
                    std::int64_t ldc, const T* row_bias) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      T acc = 0;
      for (std::int64_t k = 0; k < K; ++k) {
        T a = ta ? A[k * lda + i] : A[i * lda + k];  // op(A)[i][k]
        T b = tb ? B[j * ldb + k] : B[k * ldb + j];  // op(B)[k][j]
        acc += a * b;
      }
      C[i * ldc + j] = alpha * acc + (beta == T(0) ? T(0) : beta * C[i * ldc + j]) +
                       (row_bias ? row_bias[j] : T(0));
    }
}
template void gemm_reference<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t, float,
                                    const float*, std::int64_t, const float*, std::int64_t, float,
                                    float*, std::int64_t, const float*);
template void gemm_reference<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t, double,
                                     const double*, std::int64_t, const double*, std::int64_t,
                                     double, double*, std::int64_t, const double*);

// ---- matmul -----------------------------------------------------------------------------------

namespace {

// For every matrix of the broadcast batch, the element offsets of its A and B operands.
struct BatchPlan {
  Shape batch;                 // broadcast batch shape
  std::vector<std::int64_t> a_offset, b_offset;
};

BatchPlan plan_batch(const Shape& a, const Shape& b, std::int64_t a_matrix, std::int64_t b_matrix) {
  Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  BatchPlan plan;
  plan.batch = broadcast_shapes(ba, bb, "matmul");
  const std::size_t rank = plan.batch.size();
  auto strides_for = [&](const Shape& s, std::int64_t matrix) {
    Shape strides(rank, 0);
    std::int64_t stride = matrix;
    for (std::size_t i = 0; i < s.size(); ++i) {
      std::size_t d = s.size() - 1 - i;
      strides[rank - 1 - i] = s[d] == 1 ? 0 : stride;
      stride *= s[d];
    }
    return strides;
  };
  Shape sa = strides_for(ba, a_matrix), sb = strides_for(bb, b_matrix);
  const std::int64_t count = numel(plan.batch);
  plan.a_offset.resize(count);
  plan.b_offset.resize(count);
  for (std::int64_t n = 0; n < count; ++n) {
    std::int64_t rest = n, oa = 0, ob = 0;
    for (std::int64_t d = static_cast<std::int64_t>(rank) - 1; d >= 0; --d) {
      std::int64_t i = rest % plan.batch[d];
      rest /= plan.batch[d];
      oa += i * sa[d];
      ob += i * sb[d];
    }
    plan.a_offset[n] = oa;
    plan.b_offset[n] = ob;
  }
  return plan;
}

// C[n] = op(A[a_offset[n]]) op(B[b_offset[n]]) for each matrix n of the batch. Many small
// products run in parallel over the batch, each on one thread (OpenBLAS stays single-threaded
// inside an OpenMP parallel region); large ones leave the threading to OpenBLAS.
template <class T>
void batched_gemm(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, const T* A,
                  std::int64_t lda, const std::vector<std::int64_t>& a_offset, const T* B,
                  std::int64_t ldb, const std::vector<std::int64_t>& b_offset, T* C) {
  const std::int64_t count = static_cast<std::int64_t>(a_offset.size());
  const bool small = M * N * K < 128 * 128 * 128;
  parallel_for(count, small, [&](std::int64_t n0, std::int64_t n1) {
    for (std::int64_t n = n0; n < n1; ++n)
      gemm<T>(ta, tb, M, N, K, T(1), A + a_offset[n], lda, B + b_offset[n], ldb, T(0),
              C + n * M * N, N);
  });
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_float(a, "matmul");
  check_float(b, "matmul");
  check_same_dtype(a, b, "matmul");
  if (a.dim() < 2 || b.dim() < 2)
    fail("matmul: ", shape_str(a.shape()), " @ ", shape_str(b.shape()),
         ": both operands need at least 2 dims");
  const std::int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  if (b.size(-2) != K)
    fail("matmul: ", shape_str(a.shape()), " @ ", shape_str(b.shape()), ": inner dimensions ", K,
         " and ", b.size(-2), " differ");
  init_threads();

  if (b.dim() == 2) {
    // (..., M, K) @ (K, N): all leading dims fold into the rows of one GEMM.
    const std::int64_t rows = a.numel() / std::max<std::int64_t>(K, 1);
    Shape shape = a.shape();
    shape.back() = N;
    Tensor out = Tensor::empty(shape, a.dtype());
    dispatch_float(a.dtype(), "matmul", [&](auto tag) {
      using T = decltype(tag);
      if (K == 0) std::fill_n(out.data<T>(), out.numel(), T(0));
      else gemm<T>(false, false, rows, N, K, T(1), a.data<T>(), K, b.data<T>(), N, T(0),
                   out.data<T>(), N);
    });
    return record(out, "matmul", {a, b}, [a, b, rows, K, N](const Tensor& g) -> std::vector<Tensor> {
      Tensor da, db;
      dispatch_float(g.dtype(), "matmul", [&](auto tag) {
        using T = decltype(tag);
        if (a.requires_grad()) {  // dA = dC Bᵀ
          da = Tensor::empty(a.shape(), a.dtype());
          gemm<T>(false, true, rows, K, N, T(1), g.data<T>(), N, b.data<T>(), N, T(0),
                  da.data<T>(), K);
        }
        if (b.requires_grad()) {  // dB = Aᵀ dC, summed over every row of every batch
          db = Tensor::empty(b.shape(), b.dtype());
          gemm<T>(true, false, K, N, rows, T(1), a.data<T>(), K, g.data<T>(), N, T(0),
                  db.data<T>(), N);
        }
      });
      return {da, db};
    });
  }

  BatchPlan plan = plan_batch(a.shape(), b.shape(), M * K, K * N);
  Shape shape = plan.batch;
  shape.push_back(M);
  shape.push_back(N);
  Tensor out = Tensor::empty(shape, a.dtype());
  dispatch_float(a.dtype(), "matmul", [&](auto tag) {
    using T = decltype(tag);
    batched_gemm<T>(false, false, M, N, K, a.data<T>(), K, plan.a_offset, b.data<T>(), N,
                    plan.b_offset, out.data<T>());
  });
  return record(out, "matmul", {a, b}, [a, b, plan, M, K, N](const Tensor& g) -> std::vector<Tensor> {
    // Gradients come out with the broadcast batch shape; the engine sums them back over
    // batch dims that were broadcast.
    Shape da_shape = plan.batch, db_shape = plan.batch;
    da_shape.insert(da_shape.end(), {M, K});
    db_shape.insert(db_shape.end(), {K, N});
    std::vector<std::int64_t> g_offset(plan.a_offset.size());
    for (std::size_t n = 0; n < g_offset.size(); ++n) g_offset[n] = n * M * N;
    Tensor da, db;
    dispatch_float(g.dtype(), "matmul", [&](auto tag) {
      using T = decltype(tag);
      if (a.requires_grad()) {  // dA[n] = dC[n] B[n]ᵀ
        da = Tensor::empty(da_shape, a.dtype());
        batched_gemm<T>(false, true, M, K, N, g.data<T>(), N, g_offset, b.data<T>(), N,
                        plan.b_offset, da.data<T>());
      }
      if (b.requires_grad()) {  // dB[n] = A[n]ᵀ dC[n]
        db = Tensor::empty(db_shape, b.dtype());
        batched_gemm<T>(true, false, K, N, M, a.data<T>(), K, plan.a_offset, g.data<T>(), N,
                        g_offset, db.data<T>());
      }
    });
    return {da, db};
  });
}

// ---- linear -------------------------------------------------------------------------------------

namespace {

// out_j = Σ_r x_rj over the rows of a (rows × cols) matrix, reading x row by row. Threads take
// contiguous runs of columns; each column is summed in row order either way, so the result is the
// same on any thread count.
template <class T>
void sum_rows(const T* x, std::int64_t rows, std::int64_t cols, T* out) {
  parallel_for(cols, rows * cols > kParallelThreshold, [&](std::int64_t j0, std::int64_t j1) {
    std::fill(out + j0, out + j1, T(0));
    for (std::int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * cols;
#pragma omp simd
      for (std::int64_t j = j0; j < j1; ++j) out[j] += row[j];
    }
  });
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_float(x, "linear");
  check_float(weight, "linear");
  check_same_dtype(x, weight, "linear");
  if (weight.dim() != 2 || x.dim() < 1)
    fail("linear: input ", shape_str(x.shape()), " and weight ", shape_str(weight.shape()),
         ": expected input (..., in) and weight (out, in)");
  const std::int64_t in = weight.size(1), out_features = weight.size(0);
  if (x.size(-1) != in)
    fail("linear: input ", shape_str(x.shape()), " has ", x.size(-1),
         " features but weight ", shape_str(weight.shape()), " expects ", in);
  if (bias.defined()) {
    check_same_dtype(x, bias, "linear");
    if (bias.dim() != 1 || bias.size(0) != out_features)
      fail("linear: bias ", shape_str(bias.shape()), " does not match weight ",
           shape_str(weight.shape()), ": expected (", out_features, ",)");
  }
  init_threads();
  // Counted from the leading dims, not as numel / in: with in = 0 there are still rows, each the
  // empty sum x W^T = 0 plus b.
  std::int64_t rows = 1;
  for (std::int64_t d = 0; d + 1 < x.dim(); ++d) rows *= x.size(d);
  Shape shape = x.shape();
  shape.back() = out_features;
  Tensor y = Tensor::empty(shape, x.dtype());  // (rows, out)
  dispatch_float(x.dtype(), "linear", [&](auto tag) {
    using T = decltype(tag);
    // y = x Wᵀ, and b on every row (gemm adds it block by block, while the block is in cache)
    gemm<T>(false, true, rows, out_features, in, T(1), x.data<T>(), in, weight.data<T>(), in,
            T(0), y.data<T>(), out_features, data_or_null<T>(bias));
  });
  return record(y, "linear", {x, weight, bias},
                [x, weight, bias, rows, in, out_features](const Tensor& g) -> std::vector<Tensor> {
    Tensor dx, dw, db;
    dispatch_float(g.dtype(), "linear", [&](auto tag) {
      using T = decltype(tag);
      const T* pg = g.data<T>();  // (rows, out)
      if (x.requires_grad()) {    // dx = dy W: (rows, out) @ (out, in)
        dx = Tensor::empty(x.shape(), x.dtype());
        gemm<T>(false, false, rows, in, out_features, T(1), pg, out_features, weight.data<T>(),
                in, T(0), dx.data<T>(), in);
      }
      if (weight.requires_grad()) {  // dW = dyᵀ x: (out, rows) @ (rows, in)
        dw = Tensor::empty(weight.shape(), weight.dtype());
        gemm<T>(true, false, out_features, in, rows, T(1), pg, out_features, x.data<T>(), in,
                T(0), dw.data<T>(), in);
      }
      if (bias.defined() && bias.requires_grad()) {  // db = Σ_rows dy
        db = Tensor::empty(bias.shape(), bias.dtype());
        sum_rows(pg, rows, out_features, db.data<T>());
      }
    });
    return {dx, dw, db};
  });
}

}  // namespace uwaga
