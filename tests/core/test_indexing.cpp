#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

Tensor iota(const Shape& shape, DType dtype = DType::Float64) {
  return reshape(Tensor::arange(0, static_cast<double>(numel(shape)), 1, dtype), shape);
}

}  // namespace

TEST_CASE("index_select picks slices along a dim", "[core][indexing]") {
  Tensor x = iota({3, 4});
  Tensor rows = index_select(x, 0, Tensor::from_indices({2, 0, 2}, {3}));
  REQUIRE(rows.shape() == Shape{3, 4});
  REQUIRE(rows.to_vector() == std::vector<double>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11});
  Tensor cols = index_select(x, -1, Tensor::from_indices({3, 1}, {2}));
  REQUIRE(cols.to_vector() == std::vector<double>{3, 1, 7, 5, 11, 9});
  REQUIRE(index_select(x, 0, Tensor::empty({0}, DType::Int64)).shape() == Shape{0, 4});
  // int64 data (e.g. a table of token ids) works too.
  Tensor ids = Tensor::from_indices({5, 6, 7}, {3});
  REQUIRE(index_select(ids, 0, Tensor::from_indices({2, 2}, {2})).to_indices() ==
          std::vector<std::int64_t>{7, 7});
}

TEST_CASE("index_select scatter-adds its gradient", "[core][indexing]") {
  // Row 2 is picked twice, row 1 never: with upstream ones row 2 gets 2, row 1 gets 0.
  Tensor x = Tensor::zeros({3, 2}, DType::Float64).requires_grad_();
  sum(index_select(x, 0, Tensor::from_indices({2, 0, 2}, {3}))).backward();
  REQUIRE(x.grad().to_vector() == std::vector<double>{1, 1, 0, 0, 2, 2});

  Tensor y = leaf({3, 4, 2}, 1);
  Tensor idx = Tensor::from_indices({3, 0, 3, 1, 3}, {5});
  for (std::int64_t dim : {1, -2})
    require_gradcheck([&](const std::vector<Tensor>& in) { return index_select(in[0], dim, idx); },
                      {y});
  Tensor idx0 = Tensor::from_indices({1, 1, 0}, {3});
  require_gradcheck([&](const std::vector<Tensor>& in) { return index_select(in[0], 0, idx0); },
                    {y});
  // On a view, with the input used a second time outside the selection.
  require_gradcheck([&](const std::vector<Tensor>& in) {
    return index_select(reshape(in[0], {12, 2}), 0, idx) * slice(reshape(in[0], {12, 2}), 0, 0, 5);
  }, {y});
}

TEST_CASE("gather picks one element per index position", "[core][indexing]") {
  // out[i][j] = x[i][index[i][j]] for dim 1, as torch.gather.
  Tensor x = iota({2, 3});
  Tensor out = gather(x, 1, Tensor::from_indices({2, 0, 1, 1}, {2, 2}));
  REQUIRE(out.shape() == Shape{2, 2});
  REQUIRE(out.to_vector() == std::vector<double>{2, 0, 4, 4});
  // dim 0: out[i][j] = x[index[i][j]][j]; the index may be smaller than x in other dims.
  Tensor down = gather(x, 0, Tensor::from_indices({1, 0}, {1, 2}));
  REQUIRE(down.to_vector() == std::vector<double>{3, 1});
  // The picking cross-entropy needs: the target's entry of each row.
  Tensor picked = gather(iota({3, 4}), 1, Tensor::from_indices({3, 0, 2}, {3, 1}));
  REQUIRE(picked.to_vector() == std::vector<double>{3, 4, 10});
}

TEST_CASE("gather scatter-adds its gradient", "[core][indexing]") {
  Tensor x = Tensor::zeros({2, 3}, DType::Float64).requires_grad_();
  sum(gather(x, 1, Tensor::from_indices({2, 2, 0, 1, 1, 1}, {2, 3}))).backward();
  REQUIRE(x.grad().to_vector() == std::vector<double>{1, 0, 2, 0, 3, 0});

  Tensor y = leaf({3, 4, 2}, 2);
  Tensor idx1 = Tensor::from_indices({0, 3, 3, 1, 2, 2, 0, 0, 1, 3, 3, 3}, {3, 2, 2});
  require_gradcheck([&](const std::vector<Tensor>& in) { return gather(in[0], 1, idx1); }, {y});
  Tensor idx2 = Tensor::from_indices({1, 0, 0, 0, 1, 1}, {3, 1, 2});
  require_gradcheck([&](const std::vector<Tensor>& in) { return gather(in[0], -1, idx2); }, {y});
}

TEST_CASE("embedding looks up rows and accumulates repeated ids", "[core][indexing]") {
  Tensor W = iota({4, 3});
  Tensor ids = Tensor::from_indices({3, 0, 3, 1}, {2, 2});
  Tensor e = embedding(W, ids);
  REQUIRE(e.shape() == Shape{2, 2, 3});
  REQUIRE(e.to_vector() == std::vector<double>{9, 10, 11, 0, 1, 2, 9, 10, 11, 3, 4, 5});

  // Token 3 occurs twice, token 2 never.
  Tensor V = Tensor::zeros({4, 2}, DType::Float64).requires_grad_();
  sum(embedding(V, ids)).backward();
  REQUIRE(V.grad().to_vector() == std::vector<double>{1, 1, 1, 1, 0, 0, 2, 2});

  // A weight that already holds a gradient gets the rows' sums added to it, as a second backward
  // adds to the first: 1 + 2 for token 3 seen twice, 1 + 0 for token 2 never seen.
  Tensor U = Tensor::zeros({4, 2}, DType::Float64).requires_grad_();
  sum(U).backward();
  sum(embedding(U, ids)).backward();
  REQUIRE(U.grad().to_vector() == std::vector<double>{2, 2, 2, 2, 1, 1, 3, 3});

  Tensor w = leaf({5, 3}, 3);
  Tensor many = Tensor::from_indices({4, 4, 1, 0, 4, 2}, {3, 2});
  require_gradcheck([&](const std::vector<Tensor>& in) { return embedding(in[0], many); }, {w});
  // The weight used twice: as the table and, transposed, in a product (tied embeddings).
  require_gradcheck([&](const std::vector<Tensor>& in) {
    return matmul(embedding(in[0], many), transpose(in[0], 0, 1));
  }, {w});
  // Where the table already holds a gradient (tied to an output layer whose gradient came
  // first), the engine has the rows added into it (Node::accumulate_into_input0), asking the
  // allocator for nothing, where the rule makes a dense (V, D) of zeros: the same sums.
  Tensor A = leaf({5, 3}, 4);
  Tensor rows = embedding(A, many);  // (3, 2, 3)
  const Tensor dy = leaf({3, 2, 3}, 5).detach();
  const Tensor rule = apply_backward_rule(*rows.grad_fn(), dy)[0];
  sum(A * 2.0).backward();  // A.grad = 2 everywhere
  const AllocatorStats before = allocator_stats();
  rows.backward(dy);
  const AllocatorStats after = allocator_stats();
  CHECK(after.system_allocations + after.cache_hits ==
        before.system_allocations + before.cache_hits);
  CHECK_THAT(A.grad().to_vector(), Catch::Matchers::Approx((rule + 2.0).to_vector()).margin(1e-15));
  // float32 weights give float32 rows.
  REQUIRE(embedding(Tensor::ones({2, 2}), Tensor::from_indices({1}, {1})).dtype() ==
          DType::Float32);
}

TEST_CASE("indexing ops name the bad index and the valid range", "[core][indexing]") {
  Tensor x = Tensor::zeros({3, 4});
  REQUIRE_THROWS_WITH(index_select(x, 0, Tensor::from_indices({0, 3}, {2})),
                      Contains("index_select: index 3 at position 1 is out of range for dim 0 of "
                               "(3, 4) (valid range [0, 3))"));
  REQUIRE_THROWS_WITH(index_select(x, 1, Tensor::from_indices({-1}, {1})),
                      Contains("index -1 at position 0"));
  REQUIRE_THROWS_WITH(index_select(x, 0, Tensor::zeros({2})),
                      Contains("index_select: index must be an int64 tensor, got float32"));
  REQUIRE_THROWS_WITH(index_select(x, 0, Tensor::from_indices({0, 1}, {1, 2})),
                      Contains("index_select: index must be 1-D, got shape (1, 2)"));
  REQUIRE_THROWS_WITH(index_select(x, 2, Tensor::from_indices({0}, {1})),
                      Contains("index_select: dim 2 is out of range"));

  REQUIRE_THROWS_WITH(gather(x, 1, Tensor::from_indices({0, 4}, {1, 2})),
                      Contains("gather: index 4 at position 1 is out of range for dim 1 of (3, 4) "
                               "(valid range [0, 4))"));
  REQUIRE_THROWS_WITH(gather(x, 1, Tensor::from_indices({0, 1}, {2})),
                      Contains("gather: index of shape (2,) does not fit x of shape (3, 4)"));
  REQUIRE_THROWS_WITH(gather(x, 1, Tensor::from_indices({0, 0, 0, 0}, {4, 1})),
                      Contains("does not fit"));

  REQUIRE_THROWS_WITH(embedding(x, Tensor::from_indices({1, 2, 9}, {3})),
                      Contains("embedding: id 9 at position 2 is out of range for a vocabulary of "
                               "3 rows (weight (3, 4)) (valid range [0, 3))"));
  REQUIRE_THROWS_WITH(embedding(Tensor::zeros({3}), Tensor::from_indices({1}, {1})),
                      Contains("embedding: weight must be 2-D (vocab, dim), got shape (3,)"));
  REQUIRE_THROWS_WITH(embedding(x, Tensor::zeros({1})),
                      Contains("embedding: ids must be an int64 tensor"));
}
