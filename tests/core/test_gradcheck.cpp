#include <catch2/catch.hpp>

#include <limits>

#include "core/graph.h"
#include "core/uwaga.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using Catch::Contains;

namespace {
// x² with a deliberately wrong backward rule (2.1x instead of 2x).
Tensor wrong_square(const Tensor& x) {
  Tensor out;
  {
    NoGradGuard g;
    out = x * x;
  }
  return record(out, "wrong_square", {x}, [x](const Tensor& g) -> std::vector<Tensor> {
    return {g * x * 2.1};
  });
}
// x² whose backward forgets to return anything useful (all zeros).
Tensor dead_square(const Tensor& x) {
  Tensor out;
  {
    NoGradGuard g;
    out = x * x;
  }
  return record(out, "dead_square", {x}, [](const Tensor& g) -> std::vector<Tensor> {
    return {Tensor::zeros_like(g)};
  });
}
// x² whose backward returns NaN.
Tensor nan_square(const Tensor& x) {
  Tensor out;
  {
    NoGradGuard g;
    out = x * x;
  }
  return record(out, "nan_square", {x}, [](const Tensor& g) -> std::vector<Tensor> {
    return {g * std::numeric_limits<double>::quiet_NaN()};
  });
}
// x² whose backward returns a gradient of the wrong shape: one value too many.
Tensor misshapen_square(const Tensor& x) {
  Tensor out;
  {
    NoGradGuard g;
    out = x * x;
  }
  return record(out, "misshapen_square", {x}, [](const Tensor& g) -> std::vector<Tensor> {
    return {Tensor::ones({g.numel() + 1}, DType::Float64)};
  });
}
}  // namespace

TEST_CASE("gradcheck reports a backward pass that fails, naming the op and its input",
          "[core][gradcheck]") {
  Tensor x = uwaga::testing::leaf({3}, 4);
  REQUIRE_THROWS_WITH(misshapen_square(x).backward(Tensor::ones({3}, DType::Float64)),
                      Contains("op 'misshapen_square' returned a gradient of shape (4,) for its "
                               "input 0 of shape (3,)"));
  const auto f = [](const std::vector<Tensor>& in) { return misshapen_square(in[0]); };
  GradcheckResult r;
  REQUIRE_NOTHROW(r = gradcheck(f, {uwaga::testing::leaf({3}, 4)}));
  REQUIRE_FALSE(r.ok);
  REQUIRE_THAT(r.message, Contains("gradcheck: the backward pass failed"));
  REQUIRE_THAT(r.message, Contains("misshapen_square"));
}

TEST_CASE("gradcheck accepts a correct gradient", "[core][gradcheck]") {
  Tensor x = uwaga::testing::leaf({3, 4}, 1);
  auto r = gradcheck([](const std::vector<Tensor>& in) { return in[0] * in[0]; }, {x});
  INFO(r.message);
  REQUIRE(r.ok);
  REQUIRE(r.checked == 12);
}

TEST_CASE("gradcheck reports a wrong gradient with its worst element", "[core][gradcheck]") {
  Tensor x = uwaga::testing::leaf({2, 3}, 2);
  auto r = gradcheck([](const std::vector<Tensor>& in) { return wrong_square(in[0]); }, {x});
  REQUIRE_FALSE(r.ok);
  REQUIRE_THAT(r.message, Contains("input 0 (2, 3), element ("));
  REQUIRE_THAT(r.message, Contains("analytic"));
  REQUIRE_THAT(r.message, Contains("numeric"));
  REQUIRE_THAT(r.message, Contains("relative error"));
}

TEST_CASE("gradcheck fails when the analytic gradient is all zero", "[core][gradcheck]") {
  Tensor x = uwaga::testing::leaf({4}, 3);
  auto r = gradcheck([](const std::vector<Tensor>& in) { return dead_square(in[0]); }, {x});
  REQUIRE_FALSE(r.ok);
  REQUIRE_THAT(r.message, Contains("every analytic gradient is zero"));
  // Zero against zero proves nothing either, unless the caller says it is expected.
  auto z = gradcheck([](const std::vector<Tensor>& in) { return in[0] * 0.0; }, {x});
  REQUIRE_FALSE(z.ok);
  REQUIRE_THAT(z.message, Contains("both zero everywhere"));
  GradcheckOptions allow;
  allow.allow_all_zero = true;
  REQUIRE(gradcheck([](const std::vector<Tensor>& in) { return in[0] * 0.0; }, {x}, allow).ok);
}

TEST_CASE("gradcheck insists on float64", "[core][gradcheck]") {
  Tensor x = Tensor::ones({2}).requires_grad_();
  REQUIRE_THROWS_WITH(
      gradcheck([](const std::vector<Tensor>& in) { return in[0]; }, {x}),
      Contains("needs float64"));
}

TEST_CASE("gradcheck fails on a NaN gradient and refuses tolerances that cannot fail",
          "[core][gradcheck]") {
  Tensor x = uwaga::testing::leaf({3}, 4);
  auto r = gradcheck([](const std::vector<Tensor>& in) { return nan_square(in[0]); }, {x});
  REQUIRE_FALSE(r.ok);
  REQUIRE_THAT(r.message, Contains("analytic nan"));
  auto square = [](const std::vector<Tensor>& in) { return wrong_square(in[0]); };
  GradcheckOptions no_step;
  no_step.eps = 0;
  REQUIRE_THROWS_WITH(gradcheck(square, {x}, no_step), Contains("eps must be positive"));
  GradcheckOptions nan_tolerance;
  nan_tolerance.rtol = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_WITH(gradcheck(square, {x}, nan_tolerance), Contains("atol and rtol"));
}
