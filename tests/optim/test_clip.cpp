// Global gradient-norm clipping.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/threads.h"
#include "core/uwaga.h"
#include "optim/clip.h"

using namespace uwaga;
using namespace uwaga::optim;
using Catch::Contains;

namespace {

Tensor param_with_grad(const std::vector<double>& grad, DType dtype = DType::Float32) {
  const std::int64_t n = static_cast<std::int64_t>(grad.size());
  Tensor p = Tensor::zeros({n}, dtype).requires_grad_();
  p.set_grad(Tensor::from_vector(grad, {n}, dtype));
  return p;
}

}  // namespace

TEST_CASE("clip_grad_norm scales every gradient to the max norm and returns the norm before",
          "[optim]") {
  // ‖(3, 4, 12)‖ = 13, across two parameters of different dtypes.
  Tensor a = param_with_grad({3, 4}), b = param_with_grad({12}, DType::Float64);
  Tensor no_grad = Tensor::zeros({5}).requires_grad_();
  REQUIRE(clip_grad_norm({a, b, no_grad}, 6.5) == Approx(13.0));
  CHECK(a.grad().to_vector() == std::vector<double>{1.5, 2.0});
  CHECK(b.grad().flat(0) == Approx(6.0));
  CHECK_FALSE(no_grad.grad().defined());
  // Now the norm is max_norm: measuring again changes nothing.
  REQUIRE(clip_grad_norm({a, b}, 0) == Approx(6.5));
  REQUIRE(clip_grad_norm({a, b}, 100.0) == Approx(6.5));
  CHECK(a.grad().to_vector() == std::vector<double>{1.5, 2.0});
}

TEST_CASE("clip_grad_norm accumulates in double and runs on big gradients", "[optim]") {
  // 40000 float gradients of 1e-4 and one of 1: a float accumulator would drift; the
  // expected norm² is 1 + 40000·1e-8 = 1.0004.
  std::vector<double> g(40000, 1e-4);
  g[0] = 1.0;
  Tensor p = param_with_grad(g);
  const double expected =
      std::sqrt(1.0 + 39999 * static_cast<double>(1e-4f) * static_cast<double>(1e-4f));
  REQUIRE(clip_grad_norm({p}, 0.5) == Approx(expected).epsilon(1e-12));
  CHECK(p.grad().flat(0) == Approx(0.5 / expected).epsilon(1e-6));
  CHECK(p.grad().flat(39999) == Approx(1e-4 * 0.5 / expected).epsilon(1e-6));
  REQUIRE(clip_grad_norm({p}, 0) == Approx(0.5).epsilon(1e-6));
}

TEST_CASE("clip_grad_norm gives the same norm, bit for bit, on 1, 2 and 3 threads", "[optim]") {
  // 300,001 values: several runs of 65,536 summed on the threads, and a ragged last run.
  std::vector<double> g(300001);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = std::sin(0.37 * static_cast<double>(i)) * 1e-3;
  Tensor p = param_with_grad(g);
  init_threads();
  const int saved = num_threads();
  std::vector<double> norms;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    norms.push_back(clip_grad_norm({p}, 0));
  }
  set_num_threads(saved);
  REQUIRE(norms[0] == norms[1]);
  REQUIRE(norms[0] == norms[2]);
  double expected = 0;  // the same squares summed one by one, in double
  for (double x : g) expected += static_cast<double>(static_cast<float>(x)) * static_cast<float>(x);
  REQUIRE(norms[0] == Approx(std::sqrt(expected)).epsilon(1e-12));
}

TEST_CASE("clip_grad_norm reports a non-finite norm and leaves the gradients alone", "[optim]") {
  Tensor a = param_with_grad({3, std::numeric_limits<double>::infinity()});
  Tensor b = param_with_grad({std::nan("")});
  CHECK(std::isinf(clip_grad_norm({a}, 1.0)));
  CHECK(a.grad().flat(0) == 3.0);
  CHECK(std::isnan(clip_grad_norm({a, b}, 1.0)));
  Tensor negative_nan = param_with_grad({-std::numeric_limits<double>::quiet_NaN()});
  CHECK_FALSE(std::signbit(clip_grad_norm({negative_nan}, 1.0)));  // prints as "nan", not "-nan"
  CHECK_THROWS_WITH(clip_grad_norm({a}, std::nan("")), Contains("clip_grad_norm: max_norm must be >= 0 (0 measures the norm without clipping), got nan"));
  CHECK(clip_grad_norm({}, 1.0) == 0.0);
}
