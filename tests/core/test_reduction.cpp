#include <catch2/catch.hpp>

#include <cmath>

#include "core/uwaga.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("reductions pass gradcheck over any dims, with and without keepdim",
          "[core][reduction]") {
  std::vector<Dims> dim_sets = {{0}, {1}, {2}, {-1}, {0, 2}, {0, 1}, {1, 2}, {}};
  for (const Dims& dims : dim_sets)
    for (bool keep : {false, true}) {
      INFO("dims size " << dims.size() << " keepdim " << keep);
      Tensor x = leaf({2, 3, 4}, 11);
      require_gradcheck([&](const std::vector<Tensor>& in) { return sum(in[0], dims, keep); }, {x});
      require_gradcheck([&](const std::vector<Tensor>& in) { return mean(in[0], dims, keep); }, {x});
      require_gradcheck([&](const std::vector<Tensor>& in) { return max(in[0], dims, keep); }, {x});
      require_gradcheck([&](const std::vector<Tensor>& in) { return var(in[0], dims, keep); }, {x});
      require_gradcheck(
          [&](const std::vector<Tensor>& in) { return var(in[0], dims, keep, 0); }, {x});
    }
  Tensor x = leaf({3, 3}, 12);
  require_gradcheck([](const std::vector<Tensor>& in) { return sum(in[0]); }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) { return mean(in[0]); }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) { return max(in[0]); }, {x});
}

TEST_CASE("reduction values", "[core][reduction]") {
  Tensor x = Tensor::from_vector({1, 5, 3, 4, 2, 6}, {2, 3}, DType::Float64);
  REQUIRE(sum(x).item() == 21);
  REQUIRE(sum(x, {0}).to_vector() == std::vector<double>{5, 7, 9});
  REQUIRE(sum(x, {1}, true).shape() == Shape{2, 1});
  REQUIRE(mean(x, {1}).to_vector() == std::vector<double>{3, 4});
  REQUIRE(max(x, {1}).to_vector() == std::vector<double>{5, 6});
  REQUIRE(max(x).item() == 6);
  REQUIRE(var(x, {1}).to_vector() == std::vector<double>{4, 4});  // unbiased: 8 / 2
  REQUIRE(var(x, {1}, false, 0).at({0}) == Approx(8.0 / 3));
  REQUIRE(argmax(x, 1).to_indices() == std::vector<std::int64_t>{1, 2});
  // Along one dim the gradient of max goes to the first maximal element only (torch.max(t, 0));
  // over all dims ties share it (torch.max(t), torch.amax).
  Tensor t = Tensor::from_vector({2, 7, 7}, {3}, DType::Float64).requires_grad_();
  max(t, {0}).backward();
  REQUIRE(t.grad().to_vector() == std::vector<double>{0, 1, 0});
  t.zero_grad();
  max(t).backward();
  REQUIRE(t.grad().to_vector() == std::vector<double>{0, 0.5, 0.5});
}

TEST_CASE("argmax over many large lines, shared among threads, finds each line's first maximum",
          "[core][reduction]") {
  // 48 lines of 5,001 values along dim 1 of (4, 5001, 12) (inner lines, strided), then the same
  // as rows (48, 5001): a tie (the first wins) and a NaN (wins) planted in some lines.
  const std::int64_t A = 4, n = 5001, C = 12;
  std::vector<double> v(static_cast<std::size_t>(A * n * C));
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = std::sin(0.001 * static_cast<double>(k * k % 100003));
  auto at = [&](std::int64_t a, std::int64_t r, std::int64_t c) -> double& {
    return v[static_cast<std::size_t>((a * n + r) * C + c)];
  };
  at(1, 17, 3) = at(1, 4000, 3) = 5.0;  // a tie: 17 wins
  at(2, 999, 5) = std::nan("");
  std::vector<std::int64_t> expected;
  for (std::int64_t a = 0; a < A; ++a)
    for (std::int64_t c = 0; c < C; ++c) {
      std::int64_t best = 0;
      for (std::int64_t r = 1; r < n; ++r)
        if (!std::isnan(at(a, best, c)) && (at(a, r, c) > at(a, best, c) || std::isnan(at(a, r, c))))
          best = r;
      expected.push_back(best);
    }
  const Tensor x = Tensor::from_vector(v, {A, n, C}, DType::Float64);
  REQUIRE(argmax(x, 1).to_indices() == expected);
  REQUIRE(expected[1 * C + 3] == 17);
  REQUIRE(expected[2 * C + 5] == 999);
  // Rows: line (a, c) of the above as row a·C + c of a (48, 5001) tensor.
  std::vector<double> rows;
  for (std::int64_t a = 0; a < A; ++a)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t r = 0; r < n; ++r) rows.push_back(at(a, r, c));
  REQUIRE(argmax(Tensor::from_vector(rows, {A * C, n}, DType::Float64), 1).to_indices() == expected);
}

TEST_CASE("max and argmax agree on NaN, which counts as the largest value", "[core][reduction]") {
  // PyTorch 1.13: torch.tensor([[1., nan, 3.], [nan, 2., nan]]).max(1) -> values (nan, nan),
  // indices (1, 0); argmax gives the same indices.
  const double nan = std::nan("");
  Tensor x = Tensor::from_vector({1, nan, 3, nan, 2, nan}, {2, 3}, DType::Float64);
  REQUIRE(argmax(x, 1).to_indices() == std::vector<std::int64_t>{1, 0});
  REQUIRE(argmax(x, -1, true).shape() == Shape{2, 1});
  REQUIRE(std::isnan(max(x, {1}).flat(0)));
  REQUIRE(argmax(Tensor::from_vector({nan, 5, 1}, {3}), 0).to_indices()[0] == 0);
  // The tie-sharing gradient of max() goes to the NaNs when the max is NaN (torch.amax).
  Tensor t = x.clone().requires_grad_();
  sum(max(t, {1})).backward();
  REQUIRE(t.grad().to_vector() == std::vector<double>{0, 1, 0, 1, 0, 0});
  t.zero_grad();
  max(t).backward();
  REQUIRE(t.grad().to_vector() == std::vector<double>{0, 1.0 / 3, 0, 1.0 / 3, 0, 1.0 / 3});
}

TEST_CASE("long float32 sums are accurate over leading dims as over the last", "[core][reduction]") {
  // A float32 running sum of 10⁶ values of 0.1 drifts by about 1 %; both paths sum in double.
  const std::int64_t n = 1000000;
  Tensor x = Tensor::full({n, 2}, 0.1);
  Tensor xt = Tensor::full({2, n}, 0.1);
  for (double total : sum(x, {0}).to_vector()) REQUIRE(total == Approx(100000.0).epsilon(1e-6));
  for (double total : sum(xt, {1}).to_vector()) REQUIRE(total == Approx(100000.0).epsilon(1e-6));
}

TEST_CASE("reduction misuse gives clear errors", "[core][reduction]") {
  Tensor x = Tensor::ones({2, 3});
  REQUIRE_THROWS_WITH(sum(x, {2}), Contains("sum: dim 2 is out of range for a tensor with 2 dims"));
  REQUIRE_THROWS_WITH(mean(x, {0, 0}), Contains("repeats"));
  REQUIRE_THROWS_WITH(var(Tensor::ones({1}), {0}), Contains("degrees of freedom"));
}

TEST_CASE("max, sum and mean of a 0-d tensor over its (no) dims is its value",
          "[core][reduction]") {
  // An empty dim list reduces every dim; a 0-d tensor has none, so each reduction is the
  // identity, with gradient 1.
  REQUIRE(max(Tensor::scalar(3.0), {}, false).item() == 3.0);
  REQUIRE(max(Tensor::scalar(3.0), {}, true).shape() == Shape{});
  REQUIRE(max(Tensor::scalar(3.0)).item() == 3.0);
  REQUIRE(sum(Tensor::scalar(3.0), {}, false).item() == 3.0);
  REQUIRE(mean(Tensor::scalar(3.0), {}, false).item() == 3.0);
  Tensor x = Tensor::scalar(-2.5, DType::Float64).requires_grad_();
  Tensor m = max(x, {}, false);
  REQUIRE(m.shape() == Shape{});
  REQUIRE(m.item() == -2.5);
  (m * 4.0).backward();
  REQUIRE(x.grad().item() == 4.0);
}

TEST_CASE("first_non_finite finds the first NaN or infinity of float32, float64 and bfloat16",
          "[core][reduction]") {
  const double nan = std::nan(""), inf = HUGE_VAL;
  for (const DType dtype : {DType::Float32, DType::Float64, DType::BFloat16}) {
    INFO(dtype_name(dtype));
    // The largest finite values, a subnormal and zeros are finite.
    const double big = dtype == DType::Float64 ? 1.7e308 : 3.3e38;
    Tensor finite =
        Tensor::from_vector({big, -big, 1e-40, 0.0, -0.0, 1.0}, {6}, DType::Float64).to(dtype);
    CHECK(first_non_finite(finite) == -1);
    for (const double bad : {nan, inf, -inf})
      for (const std::int64_t at : {0, 3, 9}) {
        std::vector<double> v(10, 0.5);
        v[static_cast<std::size_t>(at)] = bad;
        if (at < 9) v[9] = nan;  // a later one does not count
        CHECK(first_non_finite(Tensor::from_vector(v, {2, 5}, DType::Float64).to(dtype)) == at);
      }
    CHECK(first_non_finite(Tensor::zeros({0, 3}, dtype)) == -1);
  }
  CHECK(first_non_finite(Tensor::from_indices({1, 2}, {2})) == -1);  // integers hold no NaN
}

TEST_CASE("first_non_finite over a tensor shared among threads finds the first in any piece",
          "[core][reduction]") {
  const int before = num_threads();
  set_num_threads(2);
  const std::int64_t n = 3'000'001;  // several blocks of 4096 and one short one, on two threads
  Tensor t = Tensor::full({n}, 2.0);
  float* p = t.data<float>();
  CHECK(first_non_finite(t) == -1);
  p[n - 1] = HUGE_VALF;  // the very last, in the second thread's piece
  CHECK(first_non_finite(t) == n - 1);
  p[2'000'000] = std::nanf("");  // the second piece's earlier one
  CHECK(first_non_finite(t) == 2'000'000);
  p[4097] = -HUGE_VALF;  // the first piece's, in its second block
  CHECK(first_non_finite(t) == 4097);
  set_num_threads(before);
}
