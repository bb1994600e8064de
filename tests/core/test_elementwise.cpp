#include <catch2/catch.hpp>

#include <cmath>

#include "core/uwaga.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::testing;
using Catch::Contains;

namespace {
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
}

TEST_CASE("binary ops pass gradcheck, with and without broadcasting", "[core][elementwise]") {
  struct Case { const char* name; Fn f; };
  std::vector<Case> ops = {
      {"add", [](const std::vector<Tensor>& in) { return add(in[0], in[1]); }},
      {"sub", [](const std::vector<Tensor>& in) { return sub(in[0], in[1]); }},
      {"mul", [](const std::vector<Tensor>& in) { return mul(in[0], in[1]); }},
      {"div", [](const std::vector<Tensor>& in) { return div(in[0], in[1]); }},
      {"maximum", [](const std::vector<Tensor>& in) { return maximum(in[0], in[1]); }},
  };
  std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {3, 4}}, {{2, 3, 4}, {4}}, {{2, 1, 4}, {3, 1}}, {{3, 4}, {}}, {{1}, {2, 3}}};
  for (auto& op : ops)
    for (auto& [sa, sb] : shapes) {
      INFO(op.name << " " << shape_str(sa) << " with " << shape_str(sb));
      require_gradcheck(op.f, {positive_leaf(sa, 1), positive_leaf(sb, 2, 2.5, 4.0)});
    }
}

TEST_CASE("scalar variants and unary ops pass gradcheck", "[core][elementwise]") {
  std::vector<std::pair<const char*, Fn>> ops = {
      {"add s", [](const std::vector<Tensor>& in) { return in[0] + 2.0; }},
      {"s - x", [](const std::vector<Tensor>& in) { return 2.0 - in[0]; }},
      {"x - s", [](const std::vector<Tensor>& in) { return in[0] - 2.0; }},
      {"mul s", [](const std::vector<Tensor>& in) { return in[0] * 3.0; }},
      {"div s", [](const std::vector<Tensor>& in) { return in[0] / 3.0; }},
      {"s / x", [](const std::vector<Tensor>& in) { return 3.0 / in[0]; }},
      {"neg", [](const std::vector<Tensor>& in) { return -in[0]; }},
      {"exp", [](const std::vector<Tensor>& in) { return exp(in[0]); }},
      {"log", [](const std::vector<Tensor>& in) { return log(in[0]); }},
      {"sqrt", [](const std::vector<Tensor>& in) { return sqrt(in[0]); }},
      {"pow 3", [](const std::vector<Tensor>& in) { return pow(in[0], 3.0); }},
      {"pow -0.5", [](const std::vector<Tensor>& in) { return pow(in[0], -0.5); }},
      {"tanh", [](const std::vector<Tensor>& in) { return tanh(in[0]); }},
      {"sigmoid", [](const std::vector<Tensor>& in) { return sigmoid(in[0]); }},
      {"relu", [](const std::vector<Tensor>& in) { return relu(in[0] - 1.2); }},
      {"abs", [](const std::vector<Tensor>& in) { return abs(in[0] - 1.2); }},
  };
  for (auto& [name, f] : ops) {
    INFO(name);
    require_gradcheck(f, {positive_leaf({3, 5}, 7)});
  }
}

TEST_CASE("erf matches std::erf and has derivative 2/sqrt(pi) exp(-u^2)",
          "[core][elementwise][erf]") {
  Tensor u = Tensor::from_vector({-2, -0.3, 0, 0.7, 1.5}, {5}, DType::Float64).requires_grad_();
  Tensor e = erf(u);
  for (int i = 0; i < 5; ++i) REQUIRE(e.flat(i) == std::erf(u.flat(i)));
  sum(e).backward();
  for (int i = 0; i < 5; ++i) {
    const double v = u.flat(i);
    REQUIRE(u.grad().flat(i) == Approx(2.0 / std::sqrt(M_PI) * std::exp(-v * v)));
  }
  require_gradcheck([](const std::vector<Tensor>& in) { return erf(in[0]); }, {leaf({3, 4}, 1)});
  REQUIRE_THROWS_WITH(erf(Tensor::from_indices({1}, {1})), Contains("erf: expects a float32"));
}

TEST_CASE("where and masked_fill pass gradcheck and select correctly", "[core][elementwise]") {
  Tensor cond = Tensor::from_vector({1, 0, 0, 1, 1, 0}, {2, 3}, DType::Float64);
  Tensor a = leaf({2, 3}, 1), b = leaf({3}, 2);
  require_gradcheck([cond](const std::vector<Tensor>& in) { return where(cond, in[0], in[1]); },
                    {a, b});
  Tensor w = where(cond, a, b);
  REQUIRE(w.at({0, 0}) == a.at({0, 0}));
  REQUIRE(w.at({0, 1}) == b.at({1}));
  Tensor mask = Tensor::from_vector({0, 1, 1}, {3});
  require_gradcheck([mask](const std::vector<Tensor>& in) { return masked_fill(in[0], mask, -5); },
                    {a});
  Tensor m = masked_fill(a, mask, -5);
  REQUIRE(m.at({1, 2}) == -5.0);
  REQUIRE(m.at({1, 0}) == a.at({1, 0}));
  REQUIRE_THROWS_WITH(masked_fill(a, Tensor::ones({4}), 0), Contains("masked_fill"));
}

TEST_CASE("ops on views and inputs used twice pass gradcheck", "[core][elementwise]") {
  Tensor x = leaf({2, 6}, 3);
  require_gradcheck([](const std::vector<Tensor>& in) {
    Tensor v = reshape(in[0], {3, 4});
    return v * v + tanh(v) * reshape(in[0], {3, 4});
  }, {x});
}

TEST_CASE("forward values of elementwise ops", "[core][elementwise]") {
  Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector({10, 20, 30}, {3});
  REQUIRE((a + b).to_vector() == std::vector<double>{11, 22, 33, 14, 25, 36});
  Tensor col = Tensor::from_vector({1, 2}, {2, 1});
  REQUIRE((a * col).to_vector() == std::vector<double>{1, 2, 3, 8, 10, 12});
  REQUIRE(relu(Tensor::from_vector({-1, 0, 2}, {3})).to_vector() == std::vector<double>{0, 0, 2});
}

TEST_CASE("NaN, zero and ties in maximum, relu and pow match PyTorch", "[core][elementwise]") {
  // Expected values from PyTorch 1.13 (float64).
  const double nan = std::nan("");
  // maximum propagates NaN from either side; ties split the gradient, NaN passes it to both.
  Tensor a = Tensor::from_vector({nan, 1, 2, 1}, {4}, DType::Float64).requires_grad_();
  Tensor b = Tensor::from_vector({1, nan, 2, 0}, {4}, DType::Float64).requires_grad_();
  Tensor m = maximum(a, b);
  REQUIRE(std::isnan(m.flat(0)));
  REQUIRE(std::isnan(m.flat(1)));
  REQUIRE(m.flat(2) == 2);
  REQUIRE(m.flat(3) == 1);
  sum(m).backward();
  REQUIRE(a.grad().to_vector() == std::vector<double>{1, 1, 0.5, 1});
  REQUIRE(b.grad().to_vector() == std::vector<double>{1, 1, 0.5, 0});
  // relu keeps a NaN (and passes its gradient on: torch's threshold_backward).
  Tensor r = Tensor::from_vector({nan, -1, 0, 2}, {4}, DType::Float64).requires_grad_();
  Tensor y = relu(r);
  REQUIRE(std::isnan(y.flat(0)));
  REQUIRE(y.to_vector()[1] == 0);
  sum(y).backward();
  REQUIRE(r.grad().to_vector() == std::vector<double>{1, 0, 0, 1});
  // x⁰ = 1 is constant: gradient 0 everywhere, also at x = 0 (not 0 · 0⁻¹ = NaN).
  Tensor x = Tensor::from_vector({0, 2, -3}, {3}, DType::Float64).requires_grad_();
  sum(pow(x, 0.0)).backward();
  REQUIRE(x.grad().to_vector() == std::vector<double>{0, 0, 0});
}

TEST_CASE("elementwise misuse gives clear errors", "[core][elementwise]") {
  Tensor a = Tensor::ones({2, 3});
  REQUIRE_THROWS_WITH(a + Tensor::ones({4}),
                      Contains("add: shapes (2, 3) and (4,) cannot be broadcast"));
  REQUIRE_THROWS_WITH(a * Tensor::ones({2, 3}, DType::Float64),
                      Contains("mul: dtypes differ: float32 (2, 3) and float64 (2, 3)"));
  REQUIRE_THROWS_WITH(exp(Tensor::from_indices({1, 2}, {2})),
                      Contains("exp: expects a float32 or float64 tensor"));
}

TEST_CASE("elementwise results do not depend on the thread count", "[core][elementwise][threads]") {
  Generator g(3);
  Tensor x = Tensor::randn({300, 400}, g);
  Tensor y = Tensor::randn({400}, g);
  int before = num_threads();
  set_num_threads(1);
  std::vector<double> one = sum(tanh(x * y + x), {1}).to_vector();
  set_num_threads(2);
  std::vector<double> two = sum(tanh(x * y + x), {1}).to_vector();
  set_num_threads(before);
  REQUIRE(one == two);
  REQUIRE_THROWS_WITH(set_num_threads(0), Contains("at least 1"));
}
