// core/bf16_gemm.h: the kernel (AVX512-BF16 where the CPU has it, else the float32 path) and the
// float32 path against the reference loops, and the bfloat16 product against the float32 one.
//
// Tolerances. Every product of two bfloat16 is exact in float32 (8 × 8 significant bits), so
// kernel and reference differ only in the order and grouping of K float32 additions (and, in
// vdpbf16ps, the flushing of denormals, which these inputs never produce): per element at most
//   (K + 2)·2⁻²³ · (|α|·Σ_k |a_k·b_k| + |β·c| + |bias|).
// Against the float32 product, rounding each operand to bfloat16 moves it by at most 2⁻⁸ of
// itself, each product by at most 2⁻⁷ + 2⁻¹⁶: per element at most
//   (2⁻⁷ + 2⁻¹⁶ + K·2⁻²²) · Σ_k |a_k·b_k|.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <vector>

#include "core/bf16_gemm.h"
#include "core/bfloat16.h"
#include "core/matmul.h"
#include "core/random.h"
#include "core/threads.h"

using namespace uwaga;

namespace {

std::vector<float> random_values(Generator& g, std::int64_t n) {
  std::vector<float> m(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
  for (float& x : m) x = static_cast<float>(2.0 * g.uniform() - 1.0);
  return m;
}

// One product's operands and the float64 sums of |op(A)[i][k]·op(B)[k][j]| over k, the scale of
// each element's rounding error.
struct Product {
  bool ta, tb;
  std::int64_t M, N, K, lda, ldb, ldc;
  std::vector<float> A, B, bias;

  float a(std::int64_t i, std::int64_t k) const { return ta ? A[k * lda + i] : A[i * lda + k]; }
  float b(std::int64_t k, std::int64_t j) const { return tb ? B[j * ldb + k] : B[k * ldb + j]; }
  double abs_sum(std::int64_t i, std::int64_t j, bool rounded) const {
    double s = 0;
    for (std::int64_t k = 0; k < K; ++k)
      s += rounded ? std::fabs(double(round_to_bfloat16(a(i, k))) * round_to_bfloat16(b(k, j)))
                   : std::fabs(double(a(i, k)) * b(k, j));
    return s;
  }
};

// C's rows ldc = N + 1 apart unless given.
Product random_product(Generator& g, bool ta, bool tb, std::int64_t M, std::int64_t N,
                       std::int64_t K, std::int64_t ldc = 0) {
  Product p{ta, tb, M, N, K, (ta ? M : K) + 2, (tb ? K : N) + 3, ldc ? ldc : N + 1, {}, {}, {}};
  p.A = random_values(g, (ta ? K : M) * p.lda);
  p.B = random_values(g, (tb ? N : K) * p.ldb);
  p.bias = random_values(g, N);
  return p;
}

using GemmFn = void (*)(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                        std::int64_t, const float*, std::int64_t, float, float*, std::int64_t,
                        const float*);

// `fn` against the reference on one product, C = α·op(A)·op(B) + β·C (+ bias): with β = 0 over a C
// full of NaN (C is only written); the column of C past N left alone.
void check_against_reference(GemmFn fn, const Product& p, float alpha, float beta,
                             bool with_bias, Generator& g) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> C0 = random_values(g, p.M * p.ldc);
  if (beta == 0.0f)
    for (std::int64_t i = 0; i < p.M; ++i)
      for (std::int64_t j = 0; j < p.N; ++j) C0[i * p.ldc + j] = nan;
  // fn's C on a 64-byte boundary, as uwaga's tensors are (where its rows are too, the AMX
  // kernel may store a large result around the caches).
  std::vector<float> storage(C0.size() + 16), R = C0;
  float* C = storage.data() + (64 - reinterpret_cast<std::uintptr_t>(storage.data()) % 64) % 64 / 4;
  std::copy(C0.begin(), C0.end(), C);
  const float* bias = with_bias ? p.bias.data() : nullptr;
  fn(p.ta, p.tb, p.M, p.N, p.K, alpha, p.A.data(), p.lda, p.B.data(), p.ldb, beta, C, p.ldc,
     bias);
  bf16_gemm_reference(p.ta, p.tb, p.M, p.N, p.K, alpha, p.A.data(), p.lda, p.B.data(), p.ldb,
                      beta, R.data(), p.ldc, bias);
  // The first element out of tolerance, if any, reported with the product (one assertion a
  // product: the edge test runs a few thousand of them).
  std::ostringstream fault;
  for (std::int64_t i = 0; i < p.M && fault.tellp() == 0; ++i) {
    for (std::int64_t j = 0; j < p.N; ++j) {
      const float c = C[i * p.ldc + j], r = R[i * p.ldc + j];
      const double scale = alpha * p.abs_sum(i, j, true) +
                           (beta == 0.0f ? 0.0 : std::fabs(beta * C0[i * p.ldc + j])) +
                           (bias ? std::fabs(bias[j]) : 0.0);
      const double tol = (p.K + 2) * std::ldexp(scale, -23);
      if (!(std::fabs(double(c) - r) <= tol)) {
        fault << "C[" << i << "][" << j << "] = " << c << ", reference " << r << ", tolerance "
              << tol;
        break;
      }
    }
    if (p.ldc > p.N && !(C[i * p.ldc + p.N] == C0[i * p.ldc + p.N]))  // past N: untouched
      fault << "C[" << i << "][" << p.N << "], past N, was written";
  }
  INFO("ta " << p.ta << " tb " << p.tb << " M " << p.M << " N " << p.N << " K " << p.K
             << " alpha " << alpha << " beta " << beta << " bias " << with_bias << ": "
             << fault.str());
  REQUIRE(fault.str().empty());
}

}  // namespace

// Every edge of a kernel's block of rows × cols sums (1, one short, full, one over, several) in
// M and N, and in K an empty sum, odd (a last pair with one value), a tile's 16 pairs and one
// short or over (AMX), past a block of 768 inner steps (both kernels); both
// transposes; α = 0.75 with β = 0, and with β = 0.5 and a bias; α = 1 (where the AMX kernel
// starts its tiles from C or the bias and stores them into C) with β = 0 with and without a
// bias, and β = 1.
void check_every_edge(GemmFn fn, std::int64_t rows, std::int64_t cols, Generator& g) {
  std::vector<std::int64_t> Ms = {1, 15, 16, 17, rows - 1, rows, rows + 1, 65};
  std::vector<std::int64_t> Ns = {1, 15, 16, 17, cols - 1, cols, cols + 1, 65};
  for (auto* v : {&Ms, &Ns}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const std::int64_t M : Ms)
        for (const std::int64_t N : Ns)
          for (const std::int64_t K : {0, 1, 2, 31, 32, 33, 300, 801}) {
            const Product p = random_product(g, ta, tb, M, N, K);
            check_against_reference(fn, p, 0.75f, 0.0f, false, g);
            check_against_reference(fn, p, 0.75f, 0.5f, true, g);
            check_against_reference(fn, p, 1.0f, 0.0f, false, g);
            check_against_reference(fn, p, 1.0f, 0.0f, true, g);
            check_against_reference(fn, p, 1.0f, 1.0f, false, g);
          }
}

TEST_CASE("the bf16 product matches the reference loops at every edge of its tile and blocks",
          "[core][bf16]") {
  INFO("bf16_gemm runs on " << bf16_gemm_path());
  Generator g(11);
  if (cpu_has_avx512_bf16()) {
    INFO("the AVX512-BF16 kernel");
    check_every_edge(&bf16_gemm_avx512_bf16, bf16_gemm_tile_rows(), bf16_gemm_tile_cols(), g);
  }
  if (cpu_has_amx_bf16()) {
    INFO("the AMX kernel");
    check_every_edge(&bf16_gemm_amx, bf16_gemm_amx_rows(), bf16_gemm_amx_cols(), g);
  }
  // bf16_gemm itself, whichever path this CPU takes
  check_every_edge(&bf16_gemm, 16, 16, g);
}

TEST_CASE("the bf16 product's float32 path (CPUs without AVX512-BF16) matches the reference",
          "[core][bf16]") {
  Generator g(12);
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const std::int64_t K : {0, 1, 33}) {
        const Product p = random_product(g, ta, tb, 17, 65, K);
        check_against_reference(&bf16_gemm_via_float32, p, 0.75f, 0.0f, false, g);
        check_against_reference(&bf16_gemm_via_float32, p, 0.75f, 0.5f, true, g);
      }
}

TEST_CASE("the bf16 product shares a large product among threads with the same result",
          "[core][bf16]") {
  const int before = num_threads();
  set_num_threads(2);
  Generator g(13);
  // Few blocks of rows × columns over a long inner dimension: on 2 threads shared out along k,
  // each thread's range (850) past a block of it (768), the partial sums added.
  for (const bool ta : {false, true}) {
    const Product p = random_product(g, ta, !ta, 300, 400, 1700);
    check_against_reference(&bf16_gemm, p, 0.75f, 0.5f, true, g);
    if (cpu_has_avx512_bf16())
      check_against_reference(&bf16_gemm_avx512_bf16, p, 0.75f, 0.5f, true, g);
  }
  set_num_threads(before);
}

TEST_CASE("the bf16 product of a result larger than L2 is the same (stored around the caches)",
          "[core][bf16]") {
  // 1050 × 528 floats (2.2 MB; rows 528 apart: whole vectors on 64-byte boundaries), a last
  // partial tile of rows and strip of columns, one block of the inner dimension, β = 0 with and
  // without a bias; and with ldc = N + 1, where every block goes through the caches.
  Generator g(14);
  for (const bool ta : {false, true}) {
    const Product p = random_product(g, ta, !ta, 1050, 528, 100, 528);
    check_against_reference(&bf16_gemm, p, 1.0f, 0.0f, true, g);
    check_against_reference(&bf16_gemm, p, 1.0f, 0.0f, false, g);
    check_against_reference(&bf16_gemm, random_product(g, ta, ta, 1050, 528, 100), 1.0f, 0.0f,
                            true, g);
  }
}

TEST_CASE("the bf16 product carries NaN and inf where the reference does", "[core][bf16]") {
  Generator g(14);
  Product p = random_product(g, false, false, 20, 50, 37);
  const float inf = std::numeric_limits<float>::infinity();
  p.A[2 * p.lda + 3] = inf;                                     // row 2: ±inf (or NaN with the NaN)
  p.A[5 * p.lda + 0] = std::numeric_limits<float>::quiet_NaN();  // row 5: NaN
  p.B[3 * p.ldb + 7] = 0.0f;                                    // inf · 0 = NaN in C[2][7]
  p.B[10 * p.ldb + 9] = -inf;                                   // column 9: ∓inf
  std::vector<float> C(static_cast<std::size_t>(p.M * p.ldc)), R = C;
  bf16_gemm(false, false, p.M, p.N, p.K, 1.0f, p.A.data(), p.lda, p.B.data(), p.ldb, 0.0f,
            C.data(), p.ldc);
  bf16_gemm_reference(false, false, p.M, p.N, p.K, 1.0f, p.A.data(), p.lda, p.B.data(), p.ldb,
                      0.0f, R.data(), p.ldc);
  std::int64_t nans = 0, infs = 0;
  for (std::int64_t i = 0; i < p.M; ++i)
    for (std::int64_t j = 0; j < p.N; ++j) {
      const float c = C[i * p.ldc + j], r = R[i * p.ldc + j];
      INFO("C[" << i << "][" << j << "] = " << c << ", reference " << r);
      REQUIRE(std::isnan(c) == std::isnan(r));
      REQUIRE(std::isinf(c) == std::isinf(r));
      if (std::isinf(r)) REQUIRE(c == r);
      nans += std::isnan(c);
      infs += std::isinf(c);
    }
  CHECK(std::isnan(C[2 * p.ldc + 7]));
  CHECK(std::isnan(C[5 * p.ldc + 20]));
  CHECK(std::isinf(C[2 * p.ldc + 8]));
  CHECK(std::isinf(C[11 * p.ldc + 9]));
  CHECK(nans >= p.N + 1);  // row 5, C[2][7], C[2][9]
  CHECK(infs >= p.N - 2 + p.M - 2);
}

TEST_CASE("the bf16 product is the float32 product to within bfloat16's rounding of the operands",
          "[core][bf16]") {
  Generator g(15);
  for (const auto& [ta, tb] : {std::pair{false, false}, {false, true}, {true, false}}) {
    const Product p = random_product(g, ta, tb, 40, 70, 200);
    std::vector<float> C(static_cast<std::size_t>(p.M * p.ldc)), F = C;
    bf16_gemm(ta, tb, p.M, p.N, p.K, 1.0f, p.A.data(), p.lda, p.B.data(), p.ldb, 0.0f, C.data(),
              p.ldc);
    gemm<float>(ta, tb, p.M, p.N, p.K, 1.0f, p.A.data(), p.lda, p.B.data(), p.ldb, 0.0f,
                F.data(), p.ldc);
    double largest_relative = 0;  // |C − F| / Σ|a·b|, the largest
    for (std::int64_t i = 0; i < p.M; ++i)
      for (std::int64_t j = 0; j < p.N; ++j) {
        const double scale = p.abs_sum(i, j, false);
        const double tol = (std::ldexp(1.0, -7) + std::ldexp(1.0, -16) + p.K * std::ldexp(1.0, -22)) * scale;
        const double d = std::fabs(double(C[i * p.ldc + j]) - F[i * p.ldc + j]);
        INFO("C[" << i << "][" << j << "] = " << C[i * p.ldc + j] << ", float32 " << F[i * p.ldc + j]);
        REQUIRE(d <= tol);
        largest_relative = std::max(largest_relative, d / scale);
      }
    // The operands were rounded: some element is further from float32 than float32's own
    // rounding of the sum could put it (K·2⁻²³ of Σ|a·b|).
    CHECK(largest_relative > p.K * std::ldexp(1.0, -23));
  }
}
