#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "core/random.h"
#include "core/small_gemm.h"

using namespace uwaga;

namespace {

// Values in [-1, 1) from the generator, written into a matrix of `rows` rows `ld` apart.
std::vector<float> random_matrix(Generator& g, std::int64_t rows, std::int64_t ld) {
  std::vector<float> m(static_cast<std::size_t>(std::max<std::int64_t>(rows * ld, 1)));
  for (float& x : m) x = static_cast<float>(2.0 * g.uniform() - 1.0);
  return m;
}

}  // namespace

TEST_CASE("uwaga's small gemm kernel matches the reference loops at every edge of its tile",
          "[core][matmul]") {
  // M, N around the tile's rows and columns (one short, exact, one over, several tiles), K from
  // 0 (an empty sum: C = β·C) up, both layouts of A, padded leading dimensions, β = 0 with NaN
  // in C (C is only written), β ≠ 0, with and without a bias on every row, and the columns of C
  // past N left as they were.
  const std::int64_t R = small_sgemm_tile_rows(), Q = small_sgemm_tile_cols();
  Generator g(5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const bool ta : {false, true})
    for (const std::int64_t M : {std::int64_t(1), R - 1, R, R + 1, 3 * R + 2, std::int64_t(65)})
      for (const std::int64_t N : {std::int64_t(1), Q - 1, Q, Q + 1, 2 * Q + 5, std::int64_t(65)})
        for (const std::int64_t K : {0, 1, 7, 24, 65})
          for (const float beta : {0.0f, 0.5f})
          for (const bool with_bias : {false, true}) {
            const std::int64_t lda = (ta ? M : K) + 2, ldb = N + 3, ldc = N + 1;
            std::vector<float> A = random_matrix(g, ta ? K : M, lda);
            std::vector<float> B = random_matrix(g, K, ldb);
            std::vector<float> C1 = random_matrix(g, M, ldc);
            if (beta == 0.0f)
              for (std::int64_t i = 0; i < M; ++i)
                for (std::int64_t j = 0; j < N; ++j) C1[i * ldc + j] = nan;
            std::vector<float> C2 = C1;
            const std::vector<float> row_bias = random_matrix(g, 1, N);
            const float* bias = with_bias ? row_bias.data() : nullptr;
            small_sgemm(ta, M, N, K, 1.5f, A.data(), lda, B.data(), ldb, beta, C1.data(), ldc,
                        bias);
            small_sgemm_reference(ta, M, N, K, 1.5f, A.data(), lda, B.data(), ldb, beta,
                                  C2.data(), ldc, bias);
            INFO("ta " << ta << " M " << M << " N " << N << " K " << K << " beta " << beta
                       << " bias " << with_bias);
            double worst = 0;
            bool finite = true, padding_kept = true;
            for (std::int64_t i = 0; i < M; ++i) {
              for (std::int64_t j = 0; j < N; ++j) {
                finite = finite && std::isfinite(C1[i * ldc + j]);
                worst = std::max(worst, double(std::fabs(C1[i * ldc + j] - C2[i * ldc + j])));
              }
              padding_kept = padding_kept && C1[i * ldc + N] == C2[i * ldc + N];
            }
            CHECK(finite);
            CHECK(padding_kept);
            // |a|, |b| < 1: each sum is off by at most about K·ε·K in either order.
            CHECK(worst <= 1e-6 * (K + 1) * (K + 1));
          }
}
