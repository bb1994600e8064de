// core/matmul_precision.h: under MatmulPrecision::bfloat16, linear and matmul (forward and both
// gradients) are bf16_gemm's products, bit for bit, on a CPU with AVX512-BF16, and within bfloat16
// rounding of the float32 ones; without AVX512-BF16 (or with UWAGA_BF16_KERNEL=reference) they are
// the float32 ones bit for bit. float64 never changes; the scope restores the setting before it.
//
// Tolerance. Rounding each operand to bfloat16 moves it by at most 2⁻⁸ of itself (on average
// about a third of that), so each product of two by at most 2⁻⁷; over K random terms the errors
// partly cancel as the sum does, and the norm of the error of a whole product comes to about
// 2⁻⁸ ≈ 4e-3 of the product's norm. The tests allow 1e-2.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "core/bf16_gemm.h"
#include "core/matmul_precision.h"
#include "core/uwaga.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::testing;

namespace {

// ‖a − b‖ / ‖b‖, in float64.
double relative_norm_error(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double diff = 0, norm = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    diff += (a.flat(i) - b.flat(i)) * (a.flat(i) - b.flat(i));
    norm += b.flat(i) * b.flat(i);
  }
  return std::sqrt(diff / norm);
}

bool same_bits(const Tensor& a, const Tensor& b) { return a.to_vector() == b.to_vector(); }

// Whether bf16_gemm's kernel runs here, so that the bfloat16 setting changes the products.
bool cpu_runs_bf16() { return std::string(bf16_gemm_path()) != "float32"; }

// linear(x, W, b) and its gradients dx, dW, db for the upstream gradient dy, under `precision`.
struct LinearResult {
  Tensor y, dx, dw, db;
};

LinearResult linear_with_grads(const Tensor& x0, const Tensor& w0, const Tensor& b0,
                               const Tensor& dy, MatmulPrecision precision) {
  const MatmulPrecisionScope scope(precision);
  Tensor x = x0.clone().requires_grad_(), w = w0.clone().requires_grad_(),
         b = b0.clone().requires_grad_();
  Tensor y = linear(x, w, b);
  y.backward(dy);
  return {y, x.grad(), w.grad(), b.grad()};
}

// The float32 product op(A)·op(B) (+ bias) of bf16_gemm itself, A and B tensors laid out tight.
Tensor bf16_product(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K,
                    const Tensor& A, const Tensor& B, const Tensor& bias = Tensor()) {
  Tensor C = Tensor::empty({M, N});
  bf16_gemm(ta, tb, M, N, K, 1.0f, A.data<float>(), ta ? M : K, B.data<float>(), tb ? K : N,
            0.0f, C.data<float>(), N, bias.defined() ? bias.data<float>() : nullptr);
  return C;
}

}  // namespace

TEST_CASE("matmul precision: the scope sets it and restores the one before", "[core][matmul]") {
  REQUIRE(matmul_precision() == MatmulPrecision::float32);  // the default
  {
    const MatmulPrecisionScope bf16(MatmulPrecision::bfloat16);
    REQUIRE(matmul_precision() == MatmulPrecision::bfloat16);
    REQUIRE(matmul_in_bfloat16() == (std::string(bf16_gemm_path()) != "float32"));
    {
      const MatmulPrecisionScope fp32(MatmulPrecision::float32);
      REQUIRE(matmul_precision() == MatmulPrecision::float32);
      REQUIRE_FALSE(matmul_in_bfloat16());
    }
    REQUIRE(matmul_precision() == MatmulPrecision::bfloat16);
  }
  REQUIRE(matmul_precision() == MatmulPrecision::float32);
  REQUIRE_FALSE(matmul_in_bfloat16());
}

TEST_CASE("matmul precision: bf16 linear is bf16_gemm's product, forward and both gradients",
          "[core][matmul]") {
  // Rows enough for gemm to share them among threads in float32; in bfloat16 one bf16_gemm call.
  const std::int64_t rows = 96, in = 40, out = 24;
  Generator g(3);
  const Tensor x = Tensor::randn({2, rows / 2, in}, g), w = Tensor::randn({out, in}, g),
               b = Tensor::randn({out}, g), dy = Tensor::randn({2, rows / 2, out}, g);
  const LinearResult fp32 = linear_with_grads(x, w, b, dy, MatmulPrecision::float32);
  const LinearResult bf16 = linear_with_grads(x, w, b, dy, MatmulPrecision::bfloat16);
  REQUIRE(same_bits(bf16.db, fp32.db));  // a sum over rows, float32 either way
  if (!cpu_runs_bf16()) {
    INFO("bf16_gemm_path() = " << bf16_gemm_path() << ": the products stay float32");
    REQUIRE(same_bits(bf16.y, fp32.y));
    REQUIRE(same_bits(bf16.dx, fp32.dx));
    REQUIRE(same_bits(bf16.dw, fp32.dw));
    return;
  }
  // y = x Wᵀ + b, dx = dy W, dW = dyᵀ x: the three layouts (NT, NN, TN) of bf16_gemm.
  const Tensor x2 = reshape(x, {rows, in}), dy2 = reshape(dy, {rows, out});
  const Tensor y = bf16_product(false, true, rows, out, in, x2, w, b);
  const Tensor dx = bf16_product(false, false, rows, in, out, dy2, w);
  const Tensor dw = bf16_product(true, false, out, in, rows, dy2, x2);
  REQUIRE(same_bits(reshape(bf16.y, {rows, out}), y));
  REQUIRE(same_bits(reshape(bf16.dx, {rows, in}), dx));
  REQUIRE(same_bits(bf16.dw, dw));
  for (auto [name, got, want] : {std::tuple{"y", bf16.y, fp32.y},
                                 std::tuple{"dx", bf16.dx, fp32.dx},
                                 std::tuple{"dW", bf16.dw, fp32.dw}}) {
    const double error = relative_norm_error(got, want);
    INFO(name << ": relative error " << error << " against float32");
    REQUIRE(error < 1e-2);
    REQUIRE(error > 0);  // the products did round to bfloat16
  }
}

TEST_CASE("matmul precision: bf16 batched matmul (attention's Q·Kᵀ) within bfloat16 rounding",
          "[core][matmul]") {
  Generator g(4);
  const Tensor q = Tensor::randn({2, 3, 17, 16}, g), k = Tensor::randn({2, 3, 16, 19}, g),
               dy = Tensor::randn({2, 3, 17, 19}, g);
  std::vector<Tensor> results[2];
  for (const MatmulPrecision precision : {MatmulPrecision::float32, MatmulPrecision::bfloat16}) {
    const MatmulPrecisionScope scope(precision);
    Tensor a = q.clone().requires_grad_(), b = k.clone().requires_grad_();
    Tensor y = matmul(a, b);
    y.backward(dy);
    results[precision == MatmulPrecision::bfloat16] = {y, a.grad(), b.grad()};
  }
  for (int i = 0; i < 3; ++i) {
    const double error = relative_norm_error(results[1][i], results[0][i]);
    INFO("output " << i << " (y, dA, dB): relative error " << error << " against float32");
    if (cpu_runs_bf16()) REQUIRE((error > 0 && error < 1e-2));
    else REQUIRE(error == 0);
  }
}

TEST_CASE("matmul precision: float64 products never change", "[core][matmul]") {
  Generator g(5);
  const Tensor x = Tensor::randn({64, 32}, g, DType::Float64),
               w = Tensor::randn({48, 32}, g, DType::Float64),
               b = Tensor::randn({48}, g, DType::Float64),
               dy = Tensor::randn({64, 48}, g, DType::Float64);
  const LinearResult fp32 = linear_with_grads(x, w, b, dy, MatmulPrecision::float32);
  const LinearResult bf16 = linear_with_grads(x, w, b, dy, MatmulPrecision::bfloat16);
  REQUIRE(same_bits(bf16.y, fp32.y));
  REQUIRE(same_bits(bf16.dx, fp32.dx));
  REQUIRE(same_bits(bf16.dw, fp32.dw));
}
