#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "core/uwaga.h"
#include "nn/softmax.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

// The gradient of ⟨v, f(x)⟩ with respect to x, for a fixed upstream v: compares two
// implementations of the same function through their vector–Jacobian products.
Tensor vjp(const std::function<Tensor(const Tensor&)>& f, const Tensor& x0, const Tensor& v) {
  Tensor x = x0.detach().clone().requires_grad_();
  f(x).backward(v);
  return x.grad();
}

}  // namespace

TEST_CASE("softmax and log_softmax of a known vector", "[nn][softmax]") {
  // Expected values from PyTorch 1.13:
  //   torch.softmax(torch.tensor([1., 2., 3.], dtype=torch.float64), 0)
  //   torch.log_softmax(...)
  // (by hand: e^k / (e + e² + e³) and k − 3 − log(1 + e⁻¹ + e⁻²)).
  Tensor x = Tensor::from_vector({1, 2, 3}, {3}, DType::Float64);
  const std::vector<double> p = {0.09003057317038045, 0.2447284710547976, 0.6652409557748218};
  const std::vector<double> logp = {-2.4076059644443806, -1.4076059644443804,
                                    -0.4076059644443804};
  for (const Tensor& y : {softmax(x, 0), softmax_composed(x, -1)})
    for (int i = 0; i < 3; ++i) REQUIRE(y.flat(i) == Approx(p[i]).epsilon(1e-14));
  for (const Tensor& y : {log_softmax(x, 0), log_softmax_composed(x, 0)})
    for (int i = 0; i < 3; ++i) REQUIRE(y.flat(i) == Approx(logp[i]).epsilon(1e-14));

  // Along dim 0 of a matrix: each column is normalised (PyTorch: torch.softmax(x, 0)).
  Tensor m = Tensor::from_vector({1, 2, 3, -1, 0, 4}, {2, 3}, DType::Float64);
  const std::vector<double> col = {0.8807970779778823, 0.8807970779778823, 0.2689414213699951,
                                   0.11920292202211755, 0.11920292202211755, 0.7310585786300049};
  Tensor s = softmax(m, 0);
  for (int i = 0; i < 6; ++i) REQUIRE(s.flat(i) == Approx(col[i]).epsilon(1e-14));
}

TEST_CASE("softmax rows sum to one and survive huge logits", "[nn][softmax]") {
  Generator gen(3);
  Tensor x = Tensor::randn({4, 5, 6}, gen, DType::Float64, 0.0, 3.0);
  for (std::int64_t dim : {0, 1, 2}) {
    Tensor total = sum(softmax(x, dim), {dim});
    for (std::int64_t i = 0; i < total.numel(); ++i) REQUIRE(total.flat(i) == Approx(1.0));
  }
  // exp(1000) overflows; subtracting the max first does not.
  Tensor big = Tensor::from_vector({1000, 1001, 1002}, {3});
  Tensor y = softmax(big, 0);
  REQUIRE(y.flat(2) == Approx(0.6652409557748218).epsilon(1e-6));
  REQUIRE(std::isfinite(log_softmax(big, 0).flat(0)));
  // float32 spacing near 1000 is 6e-5, so x − lse there is only good to about 1e-4.
  REQUIRE(log_softmax(big, 0).flat(0) == Approx(-2.4076059644443806).margin(1e-4));
}

TEST_CASE("log_softmax keeps its precision when the logits are huge", "[nn][softmax]") {
  // log_softmax(x) = (x − max) − log Σ exp(x − max) depends only on the differences; subtracting
  // max + log s in one step would round it to max. PyTorch 1.13, float32:
  //   torch.log_softmax(torch.tensor([1e30, 1e30]), 0) -> (-0.6931, -0.6931)
  //   torch.log_softmax(torch.tensor([1e6, 1e6 + 1, 1e6 + 2]), 0) -> (-2.4076, -1.4076, -0.4076)
  Tensor same = Tensor::from_vector({1e30, 1e30}, {2});
  for (std::int64_t i = 0; i < 2; ++i)
    REQUIRE(log_softmax(same, 0).flat(i) == Approx(-std::log(2.0)).epsilon(1e-6));
  Tensor big = Tensor::from_vector({1e6, 1e6 + 1, 1e6 + 2}, {3});
  const std::vector<double> logp = {-2.4076059644443806, -1.4076059644443804,
                                    -0.4076059644443804};
  Tensor along_rows = log_softmax(big, 0);
  Tensor along_cols = log_softmax(reshape(big, {3, 1}), 0);  // the strided path
  for (int i = 0; i < 3; ++i) {
    REQUIRE(along_rows.flat(i) == Approx(logp[i]).margin(1e-6));
    REQUIRE(along_cols.flat(i) == Approx(logp[i]).margin(1e-6));
  }
  // The gradient follows: dx = dy − softmax(x) Σ dy with softmax = exp(y) = (1/2, 1/2).
  Tensor x = Tensor::from_vector({1e30, 1e30}, {2}).requires_grad_();
  log_softmax(x, 0).backward(Tensor::from_vector({1, 0}, {2}));
  REQUIRE(x.grad().flat(0) == Approx(0.5).epsilon(1e-6));
  REQUIRE(x.grad().flat(1) == Approx(-0.5).epsilon(1e-6));
}

TEST_CASE("fused softmax and log_softmax pass gradcheck along every dim", "[nn][softmax]") {
  Tensor x = leaf({2, 3, 4}, 1);
  for (std::int64_t dim : {0, 1, 2, -1}) {
    INFO("dim " << dim);
    require_gradcheck([dim](const std::vector<Tensor>& in) { return softmax(in[0], dim); }, {x});
    require_gradcheck([dim](const std::vector<Tensor>& in) { return log_softmax(in[0], dim); },
                      {x});
  }
  // The input used twice (softmax(x) ⊙ x), and on a view.
  require_gradcheck([](const std::vector<Tensor>& in) { return softmax(in[0], 1) * in[0]; }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) {
    return log_softmax(reshape(in[0], {6, 4}), 0);
  }, {x});
  // The composed forms too (their gradient comes from max/sub/exp/sum/div/log).
  require_gradcheck([](const std::vector<Tensor>& in) { return softmax_composed(in[0], 1); }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) { return log_softmax_composed(in[0], 2); },
                    {x});
}

TEST_CASE("fused softmax and log_softmax equal their composed forms", "[nn][softmax]") {
  Generator gen(4);
  Tensor x = Tensor::randn({3, 4, 5}, gen, DType::Float64, 0.0, 2.0);
  Tensor v = Tensor::randn({3, 4, 5}, gen, DType::Float64);
  for (std::int64_t dim : {0, 1, 2}) {
    INFO("dim " << dim);
    auto fused = [dim](const Tensor& t) { return softmax(t, dim); };
    auto composed = [dim](const Tensor& t) { return softmax_composed(t, dim); };
    REQUIRE(max_abs_diff(fused(x), composed(x)) < 1e-14);
    REQUIRE(max_abs_diff(vjp(fused, x, v), vjp(composed, x, v)) < 1e-13);

    auto log_fused = [dim](const Tensor& t) { return log_softmax(t, dim); };
    auto log_composed = [dim](const Tensor& t) { return log_softmax_composed(t, dim); };
    REQUIRE(max_abs_diff(log_fused(x), log_composed(x)) < 1e-13);
    REQUIRE(max_abs_diff(vjp(log_fused, x, v), vjp(log_composed, x, v)) < 1e-13);
  }
  // float32 agrees with float64 to float32 precision.
  Tensor x32 = x.to(DType::Float32);
  REQUIRE(softmax(x32, 1).dtype() == DType::Float32);
  REQUIRE(max_abs_diff(softmax(x32, 1), softmax(x, 1)) < 1e-6);
  REQUIRE(max_abs_diff(log_softmax(x32, 0), log_softmax(x, 0)) < 1e-5);
}

TEST_CASE("fused softmax is one graph node, composed is several", "[nn][softmax]") {
  Tensor x = leaf({2, 3}, 5);
  REQUIRE(std::string(softmax(x, 1).grad_fn()->op) == "softmax");
  REQUIRE(std::string(log_softmax(x, 1).grad_fn()->op) == "log_softmax");
  REQUIRE(topological_order(softmax(x, 1)).size() == 1);
  REQUIRE(topological_order(softmax_composed(x, 1)).size() > 3);
}

TEST_CASE("softmax row kernels", "[nn][softmax]") {
  // forward on raw rows equals the tensor op along the last dim.
  Generator gen(6);
  Tensor x = Tensor::randn({3, 7}, gen, DType::Float64);
  Tensor dy = Tensor::randn({3, 7}, gen, DType::Float64);
  std::vector<double> y(21), dx(21, 0.0);
  softmax_rows_forward(y.data(), x.data<double>(), 3, 7);
  Tensor ref = softmax(x, -1);
  for (int i = 0; i < 21; ++i) REQUIRE(y[i] == Approx(ref.flat(i)).epsilon(1e-15));

  // backward equals the composed softmax's autograd gradient; accumulate adds on top.
  softmax_rows_backward(dx.data(), dy.data<double>(), y.data(), 3, 7, false);
  Tensor want = vjp([](const Tensor& t) { return softmax_composed(t, 1); }, x, dy);
  for (int i = 0; i < 21; ++i) REQUIRE(dx[i] == Approx(want.flat(i)).margin(1e-14));
  softmax_rows_backward(dx.data(), dy.data<double>(), y.data(), 3, 7, true);
  for (int i = 0; i < 21; ++i) REQUIRE(dx[i] == Approx(2 * want.flat(i)).margin(1e-14));

  // float instantiation
  std::vector<float> xf = {0.f, 0.f}, yf(2);
  softmax_rows_forward(yf.data(), xf.data(), 1, 2);
  REQUIRE(yf[0] == 0.5f);
}

TEST_CASE("softmax rejects bad inputs", "[nn][softmax]") {
  Tensor ids = Tensor::from_indices({1, 2}, {2});
  REQUIRE_THROWS_WITH(softmax(ids, 0), Contains("softmax: expects a float32 or float64 tensor"));
  REQUIRE_THROWS_WITH(log_softmax(ids, 0), Contains("log_softmax: expects a float32"));
  REQUIRE_THROWS_WITH(softmax(Tensor::zeros({2, 3}), 2),
                      Contains("softmax: dim 2 is out of range for a tensor with 2 dims"));
  REQUIRE_THROWS_WITH(log_softmax(Tensor::zeros({2, 3}), -3), Contains("log_softmax: dim -3"));
  REQUIRE_THROWS_WITH(softmax_composed(ids, 0), Contains("softmax_composed: expects a float32"));
}

TEST_CASE("softmax on tensors large enough for the parallel path", "[nn][softmax]") {
  // 256·300 elements is above kParallelThreshold, so the OpenMP loops run with several threads.
  Generator gen(8);
  Tensor x = Tensor::randn({256, 300}, gen, DType::Float64);
  Tensor v = Tensor::randn({256, 300}, gen, DType::Float64);
  REQUIRE(x.numel() > kParallelThreshold);
  for (std::int64_t dim : {0, 1}) {
    INFO("dim " << dim);
    auto fused = [dim](const Tensor& t) { return softmax(t, dim); };
    auto composed = [dim](const Tensor& t) { return softmax_composed(t, dim); };
    REQUIRE(max_abs_diff(fused(x), composed(x)) < 1e-14);
    REQUIRE(max_abs_diff(vjp(fused, x, v), vjp(composed, x, v)) < 1e-13);
    auto log_fused = [dim](const Tensor& t) { return log_softmax(t, dim); };
    auto log_composed = [dim](const Tensor& t) { return log_softmax_composed(t, dim); };
    REQUIRE(max_abs_diff(vjp(log_fused, x, v), vjp(log_composed, x, v)) < 1e-12);
  }
}

TEST_CASE("softmax row kernels on edge rows equal the composed softmax", "[nn][softmax]") {
  // The row kernels are softmax's plain loops (there is no tuned version); the composed softmax,
  // built from max, exp, sum and div, is the reference. One value (y = 1), odd widths, huge and
  // tiny values, −∞ (weight 0), +∞ and NaN (the row NaN), a row of −∞ only (NaN: 0/0).
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::vector<double>> rows = {
      {3.5}, {1, 2, 3}, {0.5, -1, 2, 7, -3, 0, 1},
      {1e30, -1e30, 0}, {1e-30, -1e-30, 0, 2e-30, 5e-31},
      {-inf, 0, 1, -inf, 2}, {inf, 0, 1}, {0, nan, 1, 2, 3}, {nan, 1}, {-inf, -inf, -inf}};
  for (DType dtype : {DType::Float64, DType::Float32}) {
    for (const std::vector<double>& row : rows) {
      const auto n = static_cast<std::int64_t>(row.size());
      INFO((dtype == DType::Float64 ? "float64" : "float32") << " row of " << n << ": "
                                                             << row[0] << " ...");
      Tensor x = Tensor::from_vector(row, {1, n}, dtype);
      Tensor want = softmax_composed(x, 1);
      Tensor got = Tensor::empty({1, n}, dtype);
      if (dtype == DType::Float64) softmax_rows_forward(got.data<double>(), x.data<double>(), 1, n);
      else softmax_rows_forward(got.data<float>(), x.data<float>(), 1, n);
      for (std::int64_t j = 0; j < n; ++j) {
        INFO("y[" << j << "] = " << got.flat(j) << ", composed " << want.flat(j));
        if (std::isnan(want.flat(j))) REQUIRE(std::isnan(got.flat(j)));
        else REQUIRE(got.flat(j) == Approx(want.flat(j)).margin(1e-6));
      }
    }
  }
}
