#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/uwaga.h"
#include "nn/layer_norm.h"
#include "nn/layer_norm_kernels.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("fused layer_norm passes gradcheck", "[nn][layer_norm]") {
  for (Shape shape : {Shape{5}, Shape{3, 4}, Shape{2, 3, 6}}) {
    INFO(shape_str(shape));
    std::int64_t d = shape.back();
    require_gradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2]); },
                      {leaf(shape, 1), leaf({d}, 2), leaf({d}, 3)});
  }
}

TEST_CASE("fused layer_norm equals the composed one, values and gradients", "[nn][layer_norm]") {
  // 4 rows of 7, and 150 rows of 96 (float64: blocks of 21 rows, so several and a partial one);
  // 30 rows of 40: dγ and dβ in two whole blocks of 16 features and a partial one.
  for (const Shape& shape : {Shape{4, 7}, Shape{150, 96}, Shape{30, 40}}) {
    const std::int64_t d = shape[1];
    INFO(shape_str(shape));
    Tensor x1 = leaf(shape, 1), w1 = leaf({d}, 2), b1 = leaf({d}, 3);
    Tensor x2 = leaf(shape, 1), w2 = leaf({d}, 2), b2 = leaf({d}, 3);
    Tensor up = leaf(shape, 4).detach();
    Tensor y1 = layer_norm(x1, w1, b1), y2 = layer_norm_composed(x2, w2, b2);
    REQUIRE(max_abs_diff(y1, y2) < 1e-12);
    y1.backward(up);
    y2.backward(up);
    REQUIRE(max_abs_diff(x1.grad(), x2.grad()) < 1e-12);
    REQUIRE(max_abs_diff(w1.grad(), w2.grad()) < 1e-12);
    REQUIRE(max_abs_diff(b1.grad(), b2.grad()) < 1e-12);
  }
  require_gradcheck(
      [](const std::vector<Tensor>& in) { return layer_norm_composed(in[0], in[1], in[2]); },
      {leaf({3, 5}, 5), leaf({5}, 6), leaf({5}, 7)});
}

TEST_CASE("layer_norm normalises each vector to mean 0 and variance 1", "[nn][layer_norm]") {
  Generator gen(3);
  Tensor x = Tensor::randn({6, 32}, gen, DType::Float64, 5.0, 3.0);
  Tensor y = layer_norm(x, Tensor::ones({32}, DType::Float64), Tensor::zeros({32}, DType::Float64));
  Tensor m = mean(y, {1}), v = var(y, {1}, false, 0);
  for (std::int64_t r = 0; r < 6; ++r) {
    REQUIRE(std::abs(m.at({r})) < 1e-12);
    REQUIRE(v.at({r}) == Approx(1.0).epsilon(1e-4));  // ε = 1e-5 shrinks it slightly
  }
}

TEST_CASE("LayerNorm matches PyTorch", "[nn][layer_norm][golden]") {
  LayerNorm ln(8);
  check_parity("layer_norm", ln, [&](auto& in) { return ln.forward(in.at("x")); });
}

TEST_CASE("layer_norm misuse gives clear errors", "[nn][layer_norm]") {
  REQUIRE_THROWS_WITH(layer_norm(Tensor::ones({2, 4}), Tensor::ones({3}), Tensor::zeros({3})),
                      Contains("layer_norm: input (2, 4) normalises 4 features but weight is (3,)"));
  REQUIRE_THROWS_WITH(LayerNorm(0), Contains("dim must be positive"));
  for (double eps : {0.0, -1e-5, std::nan("")}) {
    REQUIRE_THROWS_WITH(layer_norm(Tensor::ones({2, 4}), Tensor::ones({4}), Tensor::zeros({4}), eps),
                        Contains("layer_norm: eps must be a finite number > 0"));
    REQUIRE_THROWS_WITH(layer_norm_composed(Tensor::ones({2, 4}), Tensor::ones({4}),
                                            Tensor::zeros({4}), eps),
                        Contains("layer_norm: eps must be a finite number > 0"));
  }
}

namespace {

// a and b agree within tol·(floor + |b|), NaN where the other is NaN.
template <class T>
void require_same_numbers(const std::vector<T>& a, const std::vector<T>& b, double tol,
                          const char* what, double floor = 1) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(what << "[" << i << "]: " << a[i] << " against " << b[i]);
    if (std::isnan(b[i])) REQUIRE(std::isnan(a[i]));
    else REQUIRE(std::abs(double(a[i]) - double(b[i])) <= tol * (floor + std::abs(double(b[i]))));
  }
}

// The fast kernels (nn/layer_norm_kernels.cpp) against the plain loops (nn/layer_norm.cpp) on
// rows × d values drawn by `value(r, j)`, forward and backward.
template <class T, class Value>
void compare_layer_norm_kernels(std::int64_t rows, std::int64_t d, Value value, double tol) {
  const auto n = static_cast<std::size_t>(rows * d);
  std::vector<T> x(n), dy(n), w(d), b(d);
  Generator gen(7);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < d; ++j) {
      x[r * d + j] = static_cast<T>(value(r, j));
      dy[r * d + j] = static_cast<T>(gen.normal());
    }
  for (std::int64_t j = 0; j < d; ++j) {
    w[j] = static_cast<T>(1 + 0.5 * gen.normal());
    b[j] = static_cast<T>(gen.normal());
  }
  std::vector<T> y1(n), m1(rows), s1(rows), y2(n), m2(rows), s2(rows);
  layer_norm_forward(y1.data(), m1.data(), s1.data(), x.data(), w.data(), b.data(), rows, d, 1e-5);
  layer_norm_forward_reference(y2.data(), m2.data(), s2.data(), x.data(), w.data(), b.data(),
                               rows, d, 1e-5);
  require_same_numbers(y1, y2, tol, "y");
  require_same_numbers(m1, m2, tol, "mean");
  require_same_numbers(s1, s2, tol, "rstd", 0);
  std::vector<T> dx1(n), dw1(d), db1(d), dx2(n), dw2(d), db2(d);
  layer_norm_backward(dx1.data(), dw1.data(), db1.data(), dy.data(), x.data(), w.data(),
                      m2.data(), s2.data(), rows, d);
  layer_norm_backward_reference(dx2.data(), dw2.data(), db2.data(), dy.data(), x.data(),
                                w.data(), m2.data(), s2.data(), rows, d);
  require_same_numbers(dx1, dx2, tol, "dx");
  require_same_numbers(dw1, dw2, tol * std::sqrt(double(rows)), "dweight");
  require_same_numbers(db1, db2, tol * std::sqrt(double(rows)), "dbias");
  // Without dweight and dbias (an input that needs no gradient), dx is the same.
  std::vector<T> dx3(n);
  layer_norm_backward<T>(dx3.data(), nullptr, nullptr, dy.data(), x.data(), w.data(), m2.data(),
                         s2.data(), rows, d);
  require_same_numbers(dx3, dx2, tol, "dx alone");
}

template <class T>
void layer_norm_kernel_cases(double tol) {
  Generator gen(3);
  auto normal = [&](std::int64_t, std::int64_t) { return gen.normal(); };
  // Sizes: one feature (x̂ = 0), odd widths, a width of whole and partial blocks of 16 features,
  // more rows than one L1 block (up to 64), and enough values to run on several threads.
  const std::pair<std::int64_t, std::int64_t> sizes[] = {{1, 1}, {5, 1}, {1, 3}, {7, 17},
                                                         {130, 33}, {70, 96}, {400, 129}};
  for (auto [rows, d] : sizes) {
    INFO(rows << " rows of " << d);
    compare_layer_norm_kernels<T>(rows, d, normal, tol);
  }
  // Huge and tiny values (the variance 1e24 and 1e-30: ε dominates the latter), a constant row
  // (variance 0: x̂ = 0, y = β).
  compare_layer_norm_kernels<T>(9, 21, [&](auto, auto) { return 1e12 * gen.normal(); }, tol);
  compare_layer_norm_kernels<T>(9, 21, [&](auto, auto) { return 1e-15 * gen.normal(); }, tol);
  compare_layer_norm_kernels<T>(3, 11, [](auto, auto) { return 2.5; }, tol);
  // A NaN or an infinity makes its row NaN (its mean is NaN, or ∞ − ∞), and only its row.
  std::vector<T> x(3 * 5, 1), y(x.size()), mean(3), rstd(3), w(5, 1), b(5, 0);
  for (std::int64_t j = 0; j < 5; ++j) x[j] = T(j), x[10 + j] = T(-j);
  x[7] = std::numeric_limits<T>::quiet_NaN();
  x[11] = std::numeric_limits<T>::infinity();
  layer_norm_forward(y.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), 3, 5, 1e-5);
  for (std::size_t i = 0; i < y.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::isnan(y[i]) == (i >= 5));
  }
  std::vector<T> y2(x.size()), mean2(3), rstd2(3);
  layer_norm_forward_reference(y2.data(), mean2.data(), rstd2.data(), x.data(), w.data(),
                               b.data(), 3, 5, 1e-5);
  require_same_numbers(y, y2, tol, "y with NaN and inf");
}

}  // namespace

TEST_CASE("the fast layer_norm kernels equal the plain loops", "[nn][layer_norm]") {
  SECTION("float64") { layer_norm_kernel_cases<double>(1e-12); }
  SECTION("float32") { layer_norm_kernel_cases<float>(2e-5); }
}
