#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

// 0, 1, 2, ... in the given shape: every element is its own row-major index, so a rearranged
// tensor shows where each element came from.
Tensor iota(const Shape& shape, DType dtype = DType::Float64) {
  return reshape(Tensor::arange(0, static_cast<double>(numel(shape)), 1, dtype), shape);
}

}  // namespace

TEST_CASE("reshape, view, flatten, squeeze and unsqueeze share storage", "[core][shape_ops]") {
  Tensor x = iota({2, 3, 4});
  Tensor r = reshape(x, {4, -1});
  REQUIRE(r.shape() == Shape{4, 6});
  REQUIRE(view(x, {-1}).shape() == Shape{24});
  REQUIRE(flatten(x).shape() == Shape{24});
  REQUIRE(flatten(x, 1).shape() == Shape{2, 12});
  REQUIRE(flatten(x, 0, 1).shape() == Shape{6, 4});
  REQUIRE(flatten(Tensor::scalar(5)).shape() == Shape{1});
  REQUIRE(unsqueeze(x, 0).shape() == Shape{1, 2, 3, 4});
  REQUIRE(unsqueeze(x, -1).shape() == Shape{2, 3, 4, 1});
  REQUIRE(unsqueeze(x, 3).shape() == Shape{2, 3, 4, 1});
  REQUIRE(squeeze(unsqueeze(x, 1), 1).shape() == Shape{2, 3, 4});
  REQUIRE(reshape(Tensor::scalar(2), {1, 1}).shape() == Shape{1, 1});

  for (const Tensor& v :
       {r, view(x, {24}), flatten(x), unsqueeze(x, 2), squeeze(unsqueeze(x, 0), 0)})
    REQUIRE(v.shares_storage_with(x));
  // A write through the view is seen by the original (and row-major order is kept).
  r.set({1, 0}, 100);
  REQUIRE(x.at({0, 1, 2}) == 100);
  // int64 tensors reshape too (token ids).
  REQUIRE(reshape(Tensor::from_indices({1, 2, 3, 4}, {4}), {2, 2}).at({1, 0}) == 3);
}

TEST_CASE("view ops pass the gradient back in the input's shape", "[core][shape_ops]") {
  Tensor x = leaf({2, 3, 4}, 1);
  require_gradcheck([](const std::vector<Tensor>& in) { return reshape(in[0], {4, -1}); }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) { return view(in[0], {6, 4}); }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) { return flatten(in[0], 1); }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) { return unsqueeze(in[0], 1); }, {x});
  Tensor y = leaf({3, 1, 2}, 2);
  require_gradcheck([](const std::vector<Tensor>& in) { return squeeze(in[0], 1); }, {y});
  // The same input through two different views: gradients of both uses add up.
  require_gradcheck([](const std::vector<Tensor>& in) {
    return reshape(in[0], {6, 4}) * flatten(in[0], 0, 1);
  }, {x});
  // Exactly: d/dx Σ (view(x) · x) = 2x.
  Tensor z = Tensor::from_vector({1, 2, 3, 4}, {2, 2}, DType::Float64).requires_grad_();
  sum(reshape(z, {4}) * flatten(z)).backward();
  REQUIRE(z.grad().shape() == Shape{2, 2});
  REQUIRE(z.grad().to_vector() == std::vector<double>{2, 4, 6, 8});
}

TEST_CASE("permute and transpose move every element where expected", "[core][shape_ops]") {
  Tensor x = iota({2, 3, 4});
  Tensor p = permute(x, {2, 0, 1});  // p[k][i][j] = x[i][j][k]
  REQUIRE(p.shape() == Shape{4, 2, 3});
  REQUIRE_FALSE(p.shares_storage_with(x));
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t k = 0; k < 4; ++k) REQUIRE(p.at({k, i, j}) == x.at({i, j, k}));
  Tensor t = transpose(x, -1, 0);  // t[k][j][i] = x[i][j][k]
  REQUIRE(t.shape() == Shape{4, 3, 2});
  REQUIRE(t.at({3, 1, 0}) == x.at({0, 1, 3}));
  REQUIRE(permute(x, {-1, 0, 1}).to_vector() == p.to_vector());
  // Transposing twice gives the original back; int64 permutes as well.
  REQUIRE(transpose(transpose(x, 0, 2), 0, 2).to_vector() == x.to_vector());
  Tensor ids = Tensor::from_indices({0, 1, 2, 3, 4, 5}, {2, 3});
  REQUIRE(transpose(ids, 0, 1).to_indices() == std::vector<std::int64_t>{0, 3, 1, 4, 2, 5});
  // A 0-dim tensor permutes to itself.
  REQUIRE(permute(Tensor::scalar(7), {}).item() == 7);
}

TEST_CASE("permute and transpose gradients", "[core][shape_ops]") {
  Tensor x = leaf({2, 3, 4}, 3);
  require_gradcheck([](const std::vector<Tensor>& in) { return permute(in[0], {2, 0, 1}); }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) { return permute(in[0], {1, 2, 0}); }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) { return transpose(in[0], 0, 2); }, {x});
  // On a view, and an input used twice (x and its transpose meet in one product).
  Tensor s = leaf({3, 3}, 4);
  require_gradcheck([](const std::vector<Tensor>& in) {
    return transpose(reshape(in[0], {3, 3}), 0, 1) * in[0];
  }, {s});
}

TEST_CASE("expand copies a broadcast and sums the gradient back", "[core][shape_ops]") {
  Tensor x = Tensor::from_vector({1, 2, 3}, {3, 1}, DType::Float64).requires_grad_();
  Tensor e = expand(x, {2, 3, 4});
  REQUIRE(e.shape() == Shape{2, 3, 4});
  REQUIRE_FALSE(e.shares_storage_with(x));
  REQUIRE(e.at({1, 2, 3}) == 3);
  REQUIRE(e.at({0, 0, 2}) == 1);
  REQUIRE(expand(x, {-1, 5}).shape() == Shape{3, 5});
  // Each element was copied 2·4 = 8 times, so with upstream ones its gradient is 8.
  sum(e).backward();
  REQUIRE(x.grad().shape() == Shape{3, 1});
  REQUIRE(x.grad().to_vector() == std::vector<double>{8, 8, 8});

  Tensor y = leaf({1, 3}, 5);
  require_gradcheck([](const std::vector<Tensor>& in) { return expand(in[0], {2, 4, 3}); }, {y});
  require_gradcheck([](const std::vector<Tensor>& in) { return expand(in[0], {2, 3}) * in[0]; },
                    {y});
}

TEST_CASE("expand's errors say which size cannot become which", "[core][shape_ops]") {
  // Before: "dim 1 has size 3, which is neither 1 nor 1".
  Tensor x = Tensor::zeros({2, 3});
  REQUIRE_THROWS_WITH(expand(x, {2, 1}),
                      "expand: cannot expand (2, 3) to (2, 1): dim 1 has size 3, not 1; only a "
                      "dim of size 1 can be expanded");
  REQUIRE_THROWS_WITH(expand(x, {-1, 2, 3}), Contains("size -1 for dim 0 (only -1, keep the size, "
                                                      "may be negative, and not for a new leading dim)"));
  REQUIRE_THROWS_WITH(expand(x, {2, -2}), Contains("size -2 for dim 1"));
}

TEST_CASE("slice picks start, start+step, ... and scatters the gradient back",
          "[core][shape_ops]") {
  Tensor x = iota({3, 7});
  Tensor s = slice(x, 1, 1, 6, 2);  // columns 1, 3, 5
  REQUIRE(s.shape() == Shape{3, 3});
  REQUIRE(s.to_vector() == std::vector<double>{1, 3, 5, 8, 10, 12, 15, 17, 19});
  // Negative bounds count from the end; out-of-range bounds are clamped as in Python.
  REQUIRE(slice(x, -1, -2, 100).to_vector() == std::vector<double>{5, 6, 12, 13, 19, 20});
  REQUIRE(slice(x, 0, 2, 3).to_vector() == std::vector<double>{14, 15, 16, 17, 18, 19, 20});
  REQUIRE(slice(x, 1, 5, 2).shape() == Shape{3, 0});
  REQUIRE(slice(x, 1, 0, 7, 3).to_vector() ==
          std::vector<double>{0, 3, 6, 7, 10, 13, 14, 17, 20});

  // Gradient: the picked positions receive the upstream values, the rest zero.
  Tensor w = Tensor::ones({2, 5}, DType::Float64).requires_grad_();
  sum(slice(w, 1, 0, 5, 2) * 3.0).backward();
  REQUIRE(w.grad().to_vector() == std::vector<double>{3, 0, 3, 0, 3, 3, 0, 3, 0, 3});

  Tensor y = leaf({4, 5, 3}, 6);
  require_gradcheck([](const std::vector<Tensor>& in) { return slice(in[0], 1, 1, 5, 2); }, {y});
  require_gradcheck([](const std::vector<Tensor>& in) { return slice(in[0], 0, -3, -1); }, {y});
  // Two overlapping slices of one input: their gradients add where they overlap.
  require_gradcheck([](const std::vector<Tensor>& in) {
    return slice(in[0], 2, 0, 2) + slice(in[0], 2, 1, 3);
  }, {y});
}

TEST_CASE("cat and stack join tensors; split and chunk cut them", "[core][shape_ops]") {
  Tensor a = iota({2, 2});
  Tensor b = add(iota({2, 3}), 10.0);
  Tensor c = cat({a, b}, 1);
  REQUIRE(c.shape() == Shape{2, 5});
  REQUIRE(c.to_vector() == std::vector<double>{0, 1, 10, 11, 12, 2, 3, 13, 14, 15});
  REQUIRE(cat({a, a, a}, 0).shape() == Shape{6, 2});
  REQUIRE(cat({a, iota({0, 2})}, 0).to_vector() == a.to_vector());  // an empty piece is fine

  Tensor s = stack({a, a * 2.0}, 1);  // s[i][k][j] = k-th tensor at [i][j]
  REQUIRE(s.shape() == Shape{2, 2, 2});
  REQUIRE(s.to_vector() == std::vector<double>{0, 1, 0, 2, 2, 3, 4, 6});
  REQUIRE(stack({a, a}, -1).shape() == Shape{2, 2, 2});
  REQUIRE(stack({a, a, a}, 0).shape() == Shape{3, 2, 2});

  std::vector<Tensor> parts = split(iota({7, 2}), 3, 0);
  REQUIRE(parts.size() == 3);
  REQUIRE(parts[0].shape() == Shape{3, 2});
  REQUIRE(parts[2].shape() == Shape{1, 2});
  REQUIRE(parts[2].to_vector() == std::vector<double>{12, 13});
  std::vector<Tensor> sized = split(iota({2, 6}), {1, 0, 5}, 1);
  REQUIRE(sized[1].shape() == Shape{2, 0});
  REQUIRE(sized[2].to_vector() == std::vector<double>{1, 2, 3, 4, 5, 7, 8, 9, 10, 11});
  // chunk: pieces of ceil(5 / 3) = 2, so 2, 2, 1 (as torch.chunk).
  std::vector<Tensor> chunks = chunk(iota({5}), 3, 0);
  REQUIRE(chunks.size() == 3);
  REQUIRE(chunks[2].to_vector() == std::vector<double>{4});
  REQUIRE(chunk(iota({4}), 3, 0).size() == 2);  // pieces of 2: only two of them
  // int64 tensors concatenate too.
  Tensor ids = cat({Tensor::from_indices({1, 2}, {2}), Tensor::from_indices({3}, {1})}, 0);
  REQUIRE(ids.to_indices() == std::vector<std::int64_t>{1, 2, 3});
}

TEST_CASE("cat, stack, split and chunk gradients", "[core][shape_ops]") {
  Tensor a = leaf({2, 3}, 7), b = leaf({2, 1}, 8), c = leaf({2, 3}, 9);
  require_gradcheck([](const std::vector<Tensor>& in) { return cat({in[0], in[1], in[2]}, 1); },
                    {a, b, c});
  require_gradcheck([](const std::vector<Tensor>& in) { return cat({in[0], in[1]}, 0); }, {a, c});
  // The same tensor twice in one cat: both slabs of the gradient come back to it.
  require_gradcheck([](const std::vector<Tensor>& in) { return cat({in[0], in[1], in[0]}, -1); },
                    {a, b});
  require_gradcheck([](const std::vector<Tensor>& in) { return stack({in[0], in[1]}, 1); },
                    {a, c});
  Tensor x = leaf({5, 4}, 10);
  require_gradcheck([](const std::vector<Tensor>& in) {
    std::vector<Tensor> p = split(in[0], 2, 0);  // rows 0-1, 2-3, 4
    return cat({p[2] * p[2], p[0] * 2.0}, 0);    // p[1] unused: its gradient is zero
  }, {x});
  require_gradcheck([](const std::vector<Tensor>& in) {
    std::vector<Tensor> p = chunk(in[0], 2, 1);
    return p[0] * p[1];
  }, {x});
  // Exact: a piece that is not used gets zero gradient, the others their upstream values.
  Tensor y = Tensor::zeros({4}, DType::Float64).requires_grad_();
  std::vector<Tensor> p = split(y, {1, 3}, 0);
  sum(p[1] * 5.0).backward();
  REQUIRE(y.grad().to_vector() == std::vector<double>{0, 5, 5, 5});
}

TEST_CASE("shape ops reject bad arguments with clear messages", "[core][shape_ops]") {
  Tensor x = Tensor::zeros({2, 3});
  REQUIRE_THROWS_WITH(reshape(x, {4, -1}),
                      Contains("reshape: cannot reshape (2, 3) (6 elements) into (4, -1)"));
  REQUIRE_THROWS_WITH(reshape(x, {5}), Contains("into (5,)"));
  REQUIRE_THROWS_WITH(reshape(x, {-1, -1}), Contains("only one size may be -1"));
  REQUIRE_THROWS_WITH(view(x, {7}), Contains("view: cannot reshape (2, 3)"));
  REQUIRE_THROWS_WITH(flatten(x, 1, 0), Contains("flatten: start_dim 1 comes after end_dim 0"));
  REQUIRE_THROWS_WITH(squeeze(x, 1), Contains("squeeze: dim 1 of (2, 3) has size 3, not 1"));
  REQUIRE_THROWS_WITH(squeeze(x, 2), Contains("squeeze: dim 2 is out of range"));
  REQUIRE_THROWS_WITH(unsqueeze(x, 4), Contains("unsqueeze: dim 4 is out of range"));
  REQUIRE_THROWS_WITH(transpose(x, 0, 2), Contains("transpose: dim 2 is out of range"));
  REQUIRE_THROWS_WITH(permute(x, {0, 0}),
                      Contains("permute: order (0, 0) is not a permutation of the 2 dims of "
                               "(2, 3)"));
  REQUIRE_THROWS_WITH(permute(x, {0}), Contains("not a permutation"));
  REQUIRE_THROWS_WITH(expand(x, {2, 4}),
                      Contains("expand: cannot expand (2, 3) to (2, 4): dim 1 has size 3"));
  REQUIRE_THROWS_WITH(expand(x, {3}), Contains("fewer dims"));
  REQUIRE_THROWS_WITH(slice(x, 1, 0, 3, 0), Contains("slice: step must be positive, got 0"));
  REQUIRE_THROWS_WITH(slice(x, 2, 0, 1), Contains("slice: dim 2 is out of range"));
  REQUIRE_THROWS_WITH(cat({x, Tensor::zeros({3, 3})}, 1),
                      Contains("cat: tensor 1 has shape (3, 3) but tensor 0 has (2, 3)"));
  REQUIRE_THROWS_WITH(cat({x, Tensor::zeros({2, 3}, DType::Float64)}, 0),
                      Contains("cat: dtypes differ"));
  REQUIRE_THROWS_WITH(cat({}, 0), Contains("cat: needs at least one tensor"));
  REQUIRE_THROWS_WITH(cat({x, Tensor()}, 0), Contains("cat: got an undefined tensor"));
  REQUIRE_THROWS_WITH(stack({x, Tensor::zeros({3, 2})}, 0),
                      Contains("stack: tensor 1 has shape (3, 2) but tensor 0 has (2, 3)"));
  REQUIRE_THROWS_WITH(split(x, {1, 1}, 1),
                      Contains("split: sizes (1, 1) add up to 2, but dim 1 of (2, 3) has size 3"));
  REQUIRE_THROWS_WITH(split(x, 0, 1), Contains("split: split_size must be positive, got 0"));
  REQUIRE_THROWS_WITH(chunk(x, 0, 1), Contains("chunk: number of chunks must be positive"));
}

TEST_CASE("shape ops on tensors large enough for the parallel path", "[core][shape_ops]") {
  Tensor x = iota({64, 32, 20});  // 40960 elements, above kParallelThreshold
  REQUIRE(x.numel() > kParallelThreshold);
  Tensor p = permute(x, {2, 0, 1});
  REQUIRE(p.at({7, 50, 3}) == x.at({50, 3, 7}));
  REQUIRE(permute(p, {1, 2, 0}).to_vector() == x.to_vector());
  Tensor s = slice(x, 2, 1, 20, 3);
  REQUIRE(s.at({63, 31, 6}) == x.at({63, 31, 19}));
  Tensor c = cat({x, x}, 1);
  REQUIRE(c.at({10, 40, 5}) == x.at({10, 8, 5}));
  REQUIRE(expand(slice(x, 0, 0, 1), {64, 32, 20}).at({60, 31, 19}) == x.at({0, 31, 19}));
}

TEST_CASE("split, chunk and clone pass gradcheck", "[core][shape_ops]") {
  using uwaga::testing::leaf;
  using uwaga::testing::require_gradcheck;
  // Each piece is weighted differently, so a gradient routed to the wrong piece shows.
  require_gradcheck([](const std::vector<Tensor>& in) {
    std::vector<Tensor> p = split(in[0], {1, 3, 2}, 1);
    return cat({p[2] * 3.0, p[0] * -1.0, p[1] * 2.0}, 1);
  }, {leaf({2, 6}, 1)});
  require_gradcheck([](const std::vector<Tensor>& in) {
    std::vector<Tensor> p = chunk(in[0], 3, 0);
    return cat({exp(p[1]), p[0] * p[0], p[2]}, 0);
  }, {leaf({5, 2}, 2)});
  require_gradcheck([](const std::vector<Tensor>& in) { return in[0].clone() * in[0]; },
                    {leaf({3}, 3)});
}
