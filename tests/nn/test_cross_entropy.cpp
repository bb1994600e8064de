#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/uwaga.h"
#include "nn/cross_entropy.h"
#include "tests/support/gradcheck.h"
#include "tests/support/golden.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

using LossFn = Tensor (*)(const Tensor&, const Tensor&, const CrossEntropyOptions&);

// Loss value and dloss/dlogits for one implementation.
std::pair<Tensor, Tensor> loss_and_grad(LossFn f, const Tensor& logits0, const Tensor& targets,
                                        const CrossEntropyOptions& options) {
  Tensor logits = logits0.detach().clone().requires_grad_();
  Tensor loss = f(logits, targets, options);
  loss.backward();
  return {loss, logits.grad()};
}

}  // namespace

TEST_CASE("cross_entropy of known logits", "[nn][cross_entropy]") {
  // Expected values from PyTorch 1.13:
  //   z = torch.tensor([[1., 2., 3.], [1., 1., 1.]], dtype=torch.float64, requires_grad=True)
  //   F.cross_entropy(z, torch.tensor([2, 0])).backward()
  // By hand: row 0 is log(e + e² + e³) − 3 = 0.40760596..., row 1 is log 3 = 1.09861228...,
  // their mean 0.75310912...; dz = (softmax(z) − onehot) / 2.
  Tensor z = Tensor::from_vector({1, 2, 3, 1, 1, 1}, {2, 3}, DType::Float64);
  Tensor t = Tensor::from_indices({2, 0}, {2});
  const std::vector<double> dz = {0.04501528658519022, 0.12236423552739882, -0.1673795221125891,
                                  -0.33333333333333337, 0.16666666666666666, 0.16666666666666666};
  for (LossFn f : {LossFn(cross_entropy), LossFn(cross_entropy_composed)}) {
    auto [loss, grad] = loss_and_grad(f, z, t, {});
    REQUIRE(loss.shape() == Shape{});
    REQUIRE(loss.item() == Approx(0.7531091265562451).epsilon(1e-14));
    for (int i = 0; i < 6; ++i) REQUIRE(grad.flat(i) == Approx(dz[i]).epsilon(1e-13));
  }

  // With ignore_index (row 1) and label smoothing 0.2, from PyTorch:
  //   F.cross_entropy(z, torch.tensor([2, -100, 1]), ignore_index=-100, label_smoothing=0.2)
  Tensor z3 = Tensor::from_vector({1, 2, 3, 1, 1, 1, 0.5, -2, 1}, {3, 3}, DType::Float64);
  Tensor t3 = Tensor::from_indices({2, -100, 1}, {3});
  const std::vector<double> dz3 = {0.011681953251856884, 0.08903090219406548, -0.10071285544592246,
                                   0, 0, 0,
                                   0.14976277480756678, -0.41830388954854636, 0.2685411147409796};
  for (LossFn f : {LossFn(cross_entropy), LossFn(cross_entropy_composed)}) {
    auto [loss, grad] = loss_and_grad(f, z3, t3, {-100, 0.2});
    REQUIRE(loss.item() == Approx(1.8727681000599987).epsilon(1e-14));
    for (int i = 0; i < 9; ++i)
      REQUIRE(grad.flat(i) == Approx(dz3[i]).epsilon(1e-13).margin(1e-16));
  }
}

TEST_CASE("cross_entropy matches the PyTorch golden file", "[nn][cross_entropy][golden]") {
  Golden g = load_golden("cross_entropy");
  CrossEntropyOptions options;
  options.ignore_index = g.metadata_int("ignore_index");
  options.label_smoothing = g.metadata_double("label_smoothing");
  for (LossFn f : {LossFn(cross_entropy), LossFn(cross_entropy_composed)}) {
    auto [loss, grad] = loss_and_grad(f, g.get("input.logits"), g.get("input.targets"), options);
    check_close("cross_entropy loss", loss, g.get("output.loss"), 1e-12, 1e-10);
    check_close("cross_entropy dlogits", grad, g.get("grad.input.logits"), 1e-12, 1e-10);
  }
}

TEST_CASE("cross_entropy passes gradcheck, with ignore_index and label smoothing",
          "[nn][cross_entropy]") {
  Tensor z = leaf({5, 4}, 1);
  Tensor t = Tensor::from_indices({3, 0, -1, 1, 3}, {5});
  for (double eps : {0.0, 0.1}) {
    CrossEntropyOptions opt{-1, eps};
    INFO("label_smoothing " << eps);
    require_gradcheck([&](const std::vector<Tensor>& in) { return cross_entropy(in[0], t, opt); },
                      {z});
    require_gradcheck(
        [&](const std::vector<Tensor>& in) { return cross_entropy_composed(in[0], t, opt); }, {z});
  }
  // Logits from a view, used twice (a residual-like sum).
  Tensor w = leaf({20}, 2);
  require_gradcheck([&](const std::vector<Tensor>& in) {
    Tensor logits = reshape(in[0], {5, 4});
    return cross_entropy(logits * 2.0 + logits, t, {-1, 0.05});
  }, {w});
}

TEST_CASE("fused cross_entropy equals the composed form", "[nn][cross_entropy]") {
  Generator gen(7);
  Tensor z = Tensor::randn({8, 6}, gen, DType::Float64, 0.0, 3.0);
  Tensor t = Tensor::from_indices({5, 0, 7, 2, 7, 1, 4, 3}, {8});  // 7 is ignore_index
  for (double eps : {0.0, 0.1, 1.0}) {
    INFO("label_smoothing " << eps);
    CrossEntropyOptions opt{7, eps};
    auto [lf, gf] = loss_and_grad(cross_entropy, z, t, opt);
    auto [lc, gc] = loss_and_grad(cross_entropy_composed, z, t, opt);
    REQUIRE(lf.item() == Approx(lc.item()).epsilon(1e-13));
    REQUIRE(max_abs_diff(gf, gc) < 1e-14);
    // Ignored rows get no gradient.
    for (std::int64_t c = 0; c < 6; ++c) REQUIRE(gf.at({2, c}) == 0);
  }
  // The fused loss is one node whose graph reaches only the logits.
  Tensor logits = z.clone().requires_grad_();
  Tensor loss = cross_entropy(logits, t, {7, 0.0});
  REQUIRE(std::string(loss.grad_fn()->op) == "cross_entropy");
  REQUIRE(topological_order(loss).size() == 1);
}

TEST_CASE("cross_entropy with every row ignored is zero with zero gradient",
          "[nn][cross_entropy]") {
  Tensor z = Tensor::ones({2, 3}, DType::Float64).requires_grad_();
  Tensor t = Tensor::from_indices({-100, -100}, {2});
  Tensor loss = cross_entropy(z, t);
  REQUIRE(loss.item() == 0);
  loss.backward();
  REQUIRE(z.grad().to_vector() == std::vector<double>(6, 0.0));
  REQUIRE(cross_entropy_composed(z, t).item() == 0);
}

TEST_CASE("cross_entropy in float32 agrees with float64", "[nn][cross_entropy]") {
  Generator gen(9);
  Tensor z = Tensor::randn({16, 10}, gen, DType::Float64, 0.0, 4.0);
  Tensor t = Tensor::from_indices({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5}, {16});
  auto [l64, g64] = loss_and_grad(cross_entropy, z, t, {-100, 0.1});
  auto [l32, g32] = loss_and_grad(cross_entropy, z.to(DType::Float32), t, {-100, 0.1});
  REQUIRE(l32.dtype() == DType::Float32);
  REQUIRE(l32.item() == Approx(l64.item()).epsilon(1e-6));
  REQUIRE(max_abs_diff(g32.to(DType::Float64), g64) < 1e-7);
  // Huge logits stay finite (the max is subtracted before exp).
  Tensor big = Tensor::from_vector({1000, 0, -1000, 500}, {2, 2});
  REQUIRE(std::isfinite(cross_entropy(big, Tensor::from_indices({1, 0}, {2})).item()));
}

TEST_CASE("cross_entropy rejects bad inputs with clear messages", "[nn][cross_entropy]") {
  Tensor z = Tensor::zeros({4, 3});
  Tensor t = Tensor::from_indices({0, 1, 2, 0}, {4});
  REQUIRE_THROWS_WITH(cross_entropy(Tensor::zeros({4, 3, 2}), t),
                      Contains("cross_entropy: logits must be 2-D (N, C), got shape (4, 3, 2)"));
  REQUIRE_THROWS_WITH(cross_entropy(Tensor::from_indices({0, 1}, {1, 2}), t),
                      Contains("cross_entropy: expects a float32 or float64 tensor, got int64"));
  REQUIRE_THROWS_WITH(cross_entropy(z, Tensor::zeros({4})),
                      Contains("cross_entropy: targets must be int64 class indices, got float32"));
  REQUIRE_THROWS_WITH(cross_entropy(z, Tensor::from_indices({0, 1, 2}, {3})),
                      Contains("cross_entropy: targets of shape (3,) do not match logits of shape "
                               "(4, 3): expected (4,)"));
  REQUIRE_THROWS_WITH(cross_entropy(z, Tensor::from_indices({0, 1, 2, 0}, {2, 2})),
                      Contains("targets of shape (2, 2)"));
  REQUIRE_THROWS_WITH(cross_entropy(z, Tensor::from_indices({0, 3, 2, 0}, {4})),
                      Contains("cross_entropy: target 3 in row 1 is out of range for 3 classes "
                               "(valid range [0, 3), or ignore_index -100)"));
  REQUIRE_THROWS_WITH(cross_entropy(z, Tensor::from_indices({0, 1, -1, 0}, {4})),
                      Contains("target -1 in row 2"));
  // -1 is fine once it is the ignore_index.
  REQUIRE_NOTHROW(cross_entropy(z, Tensor::from_indices({0, 1, -1, 0}, {4}), {-1, 0.0}));
  REQUIRE_THROWS_WITH(cross_entropy(z, t, {-100, 1.5}),
                      Contains("cross_entropy: label_smoothing must be in [0, 1], got 1.5"));
  REQUIRE_THROWS_WITH(cross_entropy_composed(z, Tensor::from_indices({9, 0, 0, 0}, {4})),
                      Contains("cross_entropy_composed: target 9 in row 0"));
}

TEST_CASE("cross_entropy on a batch large enough for the parallel path",
          "[nn][cross_entropy]") {
  Generator gen(10);
  const std::int64_t N = 512, C = 100;
  Tensor z = Tensor::randn({N, C}, gen, DType::Float64);
  std::vector<std::int64_t> labels(N);
  for (std::int64_t r = 0; r < N; ++r) labels[r] = r % 7 == 0 ? -100 : (r * 37) % C;
  Tensor t = Tensor::from_indices(labels, {N});
  auto [lf, gf] = loss_and_grad(cross_entropy, z, t, {-100, 0.1});
  auto [lc, gc] = loss_and_grad(cross_entropy_composed, z, t, {-100, 0.1});
  REQUIRE(lf.item() == Approx(lc.item()).epsilon(1e-13));
  REQUIRE(max_abs_diff(gf, gc) < 1e-15);
}

TEST_CASE("cross_entropy without smoothing is finite when a logit is -inf",
          "[nn][cross_entropy]") {
  // A −∞ logit is a class of probability 0; with ε = 0 the smoothing term (where it would give
  // 0 · (−∞) = NaN) is absent: ℓ = −log(e¹ / (e⁰ + e¹)) = log(1 + e⁻¹), as in PyTorch.
  const double inf = std::numeric_limits<double>::infinity();
  Tensor z = Tensor::from_vector({0, -inf, 1, 2, 0, -inf}, {2, 3}, DType::Float64);
  Tensor t = Tensor::from_indices({2, 0}, {2});
  const double row0 = std::log1p(std::exp(-1.0)), row1 = std::log1p(std::exp(-2.0));
  for (LossFn f : {cross_entropy, cross_entropy_composed}) {
    auto [loss, grad] = loss_and_grad(f, z, t, {});
    REQUIRE(loss.item() == Approx((row0 + row1) / 2).epsilon(1e-14));
    for (double g : grad.to_vector()) REQUIRE(std::isfinite(g));
    REQUIRE(grad.at({0, 1}) == 0.0);  // dz = (p − q) / 2 and p = 0 at the −∞ logit
    REQUIRE(grad.at({0, 2}) == Approx((1 / (1 + std::exp(-1.0)) - 1) / 2).epsilon(1e-14));
  }
  auto [loss32, grad32] = loss_and_grad(cross_entropy, z.to(DType::Float32), t, {});
  REQUIRE(loss32.item() == Approx((row0 + row1) / 2).epsilon(1e-6));
  // With smoothing the −∞ logit is a target of weight ε/C: the loss is +∞, not NaN.
  for (LossFn f : {cross_entropy, cross_entropy_composed})
    REQUIRE(f(z, t, {-100, 0.1}).item() == inf);
}

TEST_CASE("cross_entropy of huge logits keeps log s: log p_t = (z_t - m) - log s",
          "[nn][cross_entropy]") {
  // z_t − (m + log s) would round log s away against m; PyTorch gives these values.
  Tensor z64 = Tensor::from_vector({1e14, 1e14 + 1}, {1, 2}, DType::Float64);
  Tensor z32 = Tensor::from_vector({1e30, 1e30}, {1, 2}, DType::Float32);
  for (LossFn f : {cross_entropy, cross_entropy_composed}) {
    REQUIRE(f(z64, Tensor::from_indices({1}, {1}), {}).item() ==
            Approx(0.31326168751822286).epsilon(1e-12));
    REQUIRE(f(z32, Tensor::from_indices({0}, {1}), {}).item() ==
            Approx(0.6931471805599453).epsilon(1e-6));
  }
  // With smoothing too: Σ_c log p_c = Σ_c (z_c − m) − C log s = −2 log 2 here, so ℓ = log 2.
  REQUIRE(cross_entropy(z32, Tensor::from_indices({0}, {1}), {-100, 0.2}).item() ==
          Approx(0.6931471805599453).epsilon(1e-6));
}

TEST_CASE("cross_entropy's gradient is the same written into its softmax or into a new buffer",
          "[nn][cross_entropy]") {
  // Without retain_graph the rule writes p − q over its saved softmax (core/graph.h
  // rule_runs_once); with it, into a new buffer, so a second backward() reads p unchanged.
  Generator gen(5);
  const Tensor z0 = Tensor::randn({6, 7}, gen);
  const Tensor targets = Tensor::from_indices({3, -100, 0, 6, -100, 2}, {6});
  for (double smoothing : {0.0, 0.1}) {
    auto grad_of = [&](bool retain, int passes) {
      Tensor z = z0.clone().detach().requires_grad_();
      const Tensor loss = nn::cross_entropy(z, targets, {-100, smoothing});
      for (int i = 0; i < passes; ++i) loss.backward(retain);
      return z.grad().to_vector();
    };
    const std::vector<double> once = grad_of(false, 1), kept = grad_of(true, 1);
    CHECK(once == kept);
    std::vector<double> twice = kept;
    for (double& g : twice) g *= 2;
    CHECK(grad_of(true, 2) == twice);  // the softmax was left as it was for the second pass
    CHECK(once[7] == 0.0);  // row 1 is ignored: zeros, though its buffer held probabilities
  }
}
