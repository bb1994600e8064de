#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("matmul of small integer matrices", "[core][matmul]") {
  Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector({7, 8, 9, 10, 11, 12}, {3, 2});
  REQUIRE(matmul(a, b).to_vector() == std::vector<double>{58, 64, 139, 154});
}

TEST_CASE("the BLAS gemm matches the reference loops for every transpose", "[core][matmul]") {
  Generator g(9);
  const std::int64_t M = 7, N = 5, K = 6;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Tensor A = Tensor::randn({M * K}, g, DType::Float64);
      Tensor B = Tensor::randn({K * N}, g, DType::Float64);
      Tensor C1 = Tensor::randn({M * N}, g, DType::Float64);
      Tensor C2 = C1.clone();
      std::int64_t lda = ta ? M : K, ldb = tb ? K : N;
      gemm<double>(ta, tb, M, N, K, 1.5, A.data<double>(), lda, B.data<double>(), ldb, 0.5,
                   C1.data<double>(), N);
      gemm_reference<double>(ta, tb, M, N, K, 1.5, A.data<double>(), lda, B.data<double>(), ldb,
                             0.5, C2.data<double>(), N);
      REQUIRE(max_abs_diff(C1, C2) < 1e-12);
      Tensor Af = A.to(DType::Float32), Bf = B.to(DType::Float32);
      Tensor C3 = Tensor::zeros({M * N}), C4 = Tensor::zeros({M * N});
      gemm<float>(ta, tb, M, N, K, 1.0f, Af.data<float>(), lda, Bf.data<float>(), ldb, 0.0f,
                  C3.data<float>(), N);
      gemm_reference<float>(ta, tb, M, N, K, 1.0f, Af.data<float>(), lda, Bf.data<float>(), ldb,
                            0.0f, C4.data<float>(), N);
      REQUIRE(max_abs_diff(C3, C4) < 1e-4);
    }
}

TEST_CASE("float gemm cut into OpenBLAS small-kernel blocks matches the reference loops",
          "[core][matmul]") {
  // Thin float products are cut into blocks (core/matmul.cpp): NN by rows of C, TN by the inner
  // dimension with β applied once, NT through a copy of Bᵀ. Shapes that cut into several
  // blocks, padded leading dimensions, α ≠ 1 and β ≠ 0, so that a block taking the wrong rows,
  // β applied per block or a wrong transpose shows. One-row products (M = 1) go to gemv. Under
  // the default piece size, a smaller one (more pieces) and none (whole products); with and
  // without a bias added to every row (block by block where the product is cut); on OpenBLAS's
  // kernels and on uwaga's (core/small_gemm.h).
  const std::int64_t default_work = gemm_piece_work();
  const GemmKernel default_kernel = gemm_kernel();
  Generator g(11);
  struct Case { bool ta, tb; std::int64_t M, N, K; };
  for (const GemmKernel kernel : {GemmKernel::openblas, GemmKernel::uwaga})
  for (const bool with_bias : {false, true})
  for (const std::int64_t work : {default_work, std::int64_t(200000), std::int64_t(0)})
  for (const Case c : {Case{false, false, 544, 64, 64}, Case{true, false, 64, 64, 544},
                       Case{true, false, 192, 64, 544}, Case{false, true, 544, 192, 64},
                       Case{false, true, 544, 64, 128}, Case{false, false, 7, 5, 6},
                       Case{false, true, 17, 17, 16}, Case{false, true, 1, 384, 128},
                       Case{true, false, 1, 64, 96}, Case{false, false, 1, 65, 128},
                       Case{true, true, 1, 40, 50}, Case{false, true, 65, 65, 24},
                       Case{false, false, 65, 24, 65}, Case{true, false, 65, 24, 65}}) {
    set_gemm_piece_work(work);
    set_gemm_kernel(kernel);
    const std::int64_t lda = (c.ta ? c.M : c.K) + 3, ldb = (c.tb ? c.K : c.N) + 2;
    const std::int64_t ldc = c.N + 1, a_rows = c.ta ? c.K : c.M, b_rows = c.tb ? c.N : c.K;
    Tensor A = Tensor::randn({a_rows * lda}, g), B = Tensor::randn({b_rows * ldb}, g);
    Tensor C1 = Tensor::randn({c.M * ldc}, g), C2 = C1.clone(), bias = Tensor::randn({c.N}, g);
    const float* b = with_bias ? bias.data<float>() : nullptr;
    gemm<float>(c.ta, c.tb, c.M, c.N, c.K, 0.5f, A.data<float>(), lda, B.data<float>(), ldb,
                0.25f, C1.data<float>(), ldc, b);
    gemm_reference<float>(c.ta, c.tb, c.M, c.N, c.K, 0.5f, A.data<float>(), lda,
                          B.data<float>(), ldb, 0.25f, C2.data<float>(), ldc, b);
    INFO("kernel " << (kernel == GemmKernel::uwaga ? "uwaga" : "openblas") << ", bias " << with_bias << ", piece work " << work << ": ta " << c.ta << " tb " << c.tb << " M " << c.M << " N "
                       << c.N << " K " << c.K);
    CHECK(max_abs_diff(C1, C2) < 1e-3);
  }
  set_gemm_piece_work(default_work);
  set_gemm_kernel(default_kernel);
  CHECK_THROWS_WITH(set_gemm_piece_work(-1), Catch::Contains("expected a size >= 0, got -1"));
}

TEST_CASE("matmul passes gradcheck: 2-D, non-square, batched, broadcast", "[core][matmul]") {
  std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {4, 2}}, {{1, 5}, {5, 1}}, {{2, 3, 4}, {4, 5}}, {{2, 3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {3, 4, 2}}, {{3, 4}, {2, 4, 3}}};
  for (auto& [sa, sb] : shapes) {
    INFO(shape_str(sa) << " @ " << shape_str(sb));
    require_gradcheck([](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); },
                      {leaf(sa, 1), leaf(sb, 2)});
  }
}

TEST_CASE("batched matmul agrees with one matmul per batch element", "[core][matmul]") {
  Generator g(4);
  Tensor a = Tensor::randn({6, 17, 16}, g), b = Tensor::randn({6, 16, 17}, g);
  Tensor c = matmul(a, b);
  for (std::int64_t i = 0; i < 6; ++i) {
    Tensor ci = matmul(reshape(slice(a, 0, i, i + 1), {17, 16}),
                       reshape(slice(b, 0, i, i + 1), {16, 17}));
    REQUIRE(max_abs_diff(reshape(slice(c, 0, i, i + 1), {17, 17}), ci) == 0.0);
  }
}

TEST_CASE("linear equals matmul with the transposed weight plus bias, and passes gradcheck",
          "[core][matmul]") {
  Tensor x = leaf({2, 3, 4}, 1), w = leaf({5, 4}, 2), b = leaf({5}, 3);
  Tensor y = linear(x, w, b);
  Tensor ref = matmul(x, transpose(w, 0, 1)) + b;
  REQUIRE(max_abs_diff(y, ref) < 1e-12);
  require_gradcheck([](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); },
                    {x, w, b});
  require_gradcheck([](const std::vector<Tensor>& in) { return linear(in[0], in[1], Tensor()); },
                    {x, w});
}

TEST_CASE("matmul and linear misuse gives clear errors", "[core][matmul]") {
  REQUIRE_THROWS_WITH(matmul(Tensor::ones({32, 64}), Tensor::ones({32, 64})),
                      Contains("matmul: (32, 64) @ (32, 64): inner dimensions 64 and 32 differ"));
  REQUIRE_THROWS_WITH(matmul(Tensor::ones({3}), Tensor::ones({3, 2})),
                      Contains("at least 2 dims"));
  REQUIRE_THROWS_WITH(matmul(Tensor::ones({2, 3, 4}), Tensor::ones({3, 4, 5})),
                      Contains("cannot be broadcast"));
  REQUIRE_THROWS_WITH(linear(Tensor::ones({2, 3}), Tensor::ones({5, 4}), Tensor()),
                      Contains("input (2, 3) has 3 features but weight (5, 4) expects 4"));
  REQUIRE_THROWS_WITH(linear(Tensor::ones({2, 4}), Tensor::ones({5, 4}), Tensor::ones({4})),
                      Contains("bias (4,) does not match weight (5, 4)"));
}

TEST_CASE("linear with zero input features gives the bias on every row, and its gradients",
          "[core][matmul][linear]") {
  // x W^T is an empty sum: each of the 3 rows is b (or 0 without bias), and db = Σ_rows dy.
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Tensor x = Tensor::empty({3, 0}, dtype).requires_grad_();
    Tensor W = Tensor::empty({4, 0}, dtype).requires_grad_();
    Tensor b = Tensor::from_vector({1, -2, 3, 0.5}, {4}, dtype).requires_grad_();
    Tensor y = linear(x, W, b);
    REQUIRE(y.shape() == Shape{3, 4});
    REQUIRE(y.to_vector() == std::vector<double>{1, -2, 3, 0.5, 1, -2, 3, 0.5, 1, -2, 3, 0.5});
    Tensor dy = Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4}, dtype);
    y.backward(dy);
    REQUIRE(b.grad().to_vector() == std::vector<double>{15, 18, 21, 24});
    REQUIRE(x.grad().shape() == Shape{3, 0});
    REQUIRE(W.grad().shape() == Shape{4, 0});

    Tensor x3 = Tensor::empty({2, 3, 0}, dtype);  // leading dims (2, 3): 6 rows
    Tensor y0 = linear(x3, W.detach(), Tensor());
    REQUIRE(y0.shape() == Shape{2, 3, 4});
    REQUIRE(y0.to_vector() == std::vector<double>(24, 0.0));
  }
}
