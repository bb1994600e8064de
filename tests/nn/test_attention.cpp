#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/attention.h"
#include "nn/scaled_dot_product_attention.h"
#include "nn/self_attention.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

Tensor padding(const std::vector<double>& values, std::int64_t B, std::int64_t S) {
  return Tensor::from_vector(values, {B, S}, DType::Float64);
}

// Reorders rows of dim `dim` of x by `order`.
Tensor permute_rows(const Tensor& x, std::int64_t dim, const std::vector<std::int64_t>& order) {
  return index_select(x, dim, Tensor::from_indices(order, {static_cast<std::int64_t>(order.size())}));
}

// The fused op and the composed reference on the same inputs (leaves seeded seed, seed + 1,
// seed + 2; the upstream gradient seed + 3): the same Y, A and gradients, and a finite Y.
void require_fused_equals_composed(const Shape& q, const Shape& k, const Shape& v,
                                   const AttentionMask& mask, std::uint64_t seed) {
  Tensor q1 = leaf(q, seed), k1 = leaf(k, seed + 1), v1 = leaf(v, seed + 2);
  Tensor q2 = leaf(q, seed), k2 = leaf(k, seed + 1), v2 = leaf(v, seed + 2);
  Tensor a1, a2;
  Tensor y1 = scaled_dot_product_attention(q1, k1, v1, mask, &a1);
  Tensor y2 = scaled_dot_product_attention_composed(q2, k2, v2, mask, &a2);
  for (double y : y2.to_vector()) REQUIRE(std::isfinite(y));
  REQUIRE(max_abs_diff(y1, y2) < 1e-12);
  REQUIRE(max_abs_diff(a1, a2) < 1e-12);
  Tensor up = leaf(y1.shape(), seed + 3).detach();
  y1.backward(up);
  y2.backward(up);
  REQUIRE(max_abs_diff(q1.grad(), q2.grad()) < 1e-12);
  REQUIRE(max_abs_diff(k1.grad(), k2.grad()) < 1e-12);
  REQUIRE(max_abs_diff(v1.grad(), v2.grad()) < 1e-12);
}

}  // namespace

TEST_CASE("scaled dot-product attention passes gradcheck, with and without masks",
          "[nn][attention]") {
  struct Case { const char* name; Shape q, k, v; AttentionMask mask; };
  std::vector<Case> cases = {
      {"plain 3-D", {2, 3, 4}, {2, 5, 4}, {2, 5, 3}, {}},
      {"heads", {2, 2, 3, 4}, {2, 2, 3, 4}, {2, 2, 3, 4}, {}},
      {"causal", {2, 2, 4, 3}, {2, 2, 4, 3}, {2, 2, 4, 3}, {.causal = true}},
      {"padded", {2, 2, 3, 4}, {2, 2, 5, 4}, {2, 2, 5, 2},
       {.key_padding = padding({0, 0, 0, 1, 1, 0, 0, 0, 0, 1}, 2, 5)}},
      {"causal+padded", {2, 1, 4, 3}, {2, 1, 4, 3}, {2, 1, 4, 3},
       {.key_padding = padding({0, 0, 0, 1, 0, 0, 0, 0}, 2, 4), .causal = true}},
  };
  for (auto& c : cases) {
    INFO(c.name);
    AttentionMask mask = c.mask;
    require_gradcheck([mask](const std::vector<Tensor>& in) {
      return scaled_dot_product_attention(in[0], in[1], in[2], mask);
    }, {leaf(c.q, 1), leaf(c.k, 2), leaf(c.v, 3)});
    require_gradcheck([mask](const std::vector<Tensor>& in) {
      return scaled_dot_product_attention_composed(in[0], in[1], in[2], mask);
    }, {leaf(c.q, 1), leaf(c.k, 2), leaf(c.v, 3)});
    require_fused_equals_composed(c.q, c.k, c.v, mask, 4);
  }
}

TEST_CASE("attention weights: rows sum to 1, masks give exactly zero weight", "[nn][attention]") {
  Generator gen(1);
  Tensor Q = Tensor::randn({2, 4, 3}, gen, DType::Float64);
  Tensor K = Tensor::randn({2, 4, 3}, gen, DType::Float64);
  Tensor V = Tensor::randn({2, 4, 3}, gen, DType::Float64);
  Tensor A;
  Tensor kp = padding({0, 0, 0, 1, 0, 0, 1, 1}, 2, 4);
  scaled_dot_product_attention(Q, K, V, {.key_padding = kp, .causal = true}, &A);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t i = 0; i < 4; ++i) {
      double row = 0;
      for (std::int64_t j = 0; j < 4; ++j) {
        double a = A.at({b, i, j});
        row += a;
        if (j > i) REQUIRE(a == 0.0);                    // causal: no future position
        if (kp.at({b, j}) != 0) REQUIRE(a == 0.0);       // padding: no padded key
      }
      REQUIRE(row == Approx(1.0).epsilon(1e-12));
    }
}

TEST_CASE("a fully padded row gives zero weights and zero output, not NaN", "[nn][attention]") {
  Tensor Q = leaf({2, 3, 4}, 1), K = leaf({2, 3, 4}, 2), V = leaf({2, 3, 4}, 3);
  Tensor A;
  Tensor kp = padding({1, 1, 1, 0, 0, 1}, 2, 3);  // batch 0: every key padded
  Tensor Y = scaled_dot_product_attention(Q, K, V, {.key_padding = kp}, &A);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j) {
      REQUIRE(Y.at({0, i, j}) == 0.0);
      REQUIRE_FALSE(std::isnan(Y.at({1, i, j})));
    }
  sum(Y * Y).backward();
  for (double g : Q.grad().to_vector()) REQUIRE_FALSE(std::isnan(g));
  REQUIRE(Q.grad().at({0, 0, 0}) == 0.0);
  REQUIRE(Q.grad().at({1, 0, 0}) != 0.0);
}

TEST_CASE("the composed reference agrees with the fused op on fully masked rows",
          "[nn][attention]") {
  // A query row with no key to look at gets A = 0 and Y = 0 and passes no gradient, in both
  // implementations (the composed one used to give softmax(−∞, …, −∞) = NaN).
  struct Case { const char* name; Shape q, k; AttentionMask mask; };
  std::vector<Case> cases = {
      {"padded batch element", {2, 3, 4}, {2, 3, 4},
       {.key_padding = padding({1, 1, 1, 0, 0, 1}, 2, 3)}},
      {"causal row 0, first key padded", {2, 2, 3, 4}, {2, 2, 3, 4},
       {.key_padding = padding({1, 0, 0, 0, 1, 0}, 2, 3), .causal = true}},
      {"more keys than queries, all padded", {1, 2, 2, 3}, {1, 2, 4, 3},
       {.key_padding = padding({1, 1, 1, 1}, 1, 4)}},
  };
  for (auto& c : cases) {
    INFO(c.name);
    Shape v_shape = c.k;
    v_shape.back() = 2;
    require_fused_equals_composed(c.q, c.k, v_shape, c.mask, 1);
    if (&c == &cases.back()) continue;  // no row has a key: every gradient is 0
    AttentionMask mask = c.mask;
    require_gradcheck([mask](const std::vector<Tensor>& in) {
      return scaled_dot_product_attention_composed(in[0], in[1], in[2], mask);
    }, {leaf(c.q, 5), leaf(c.k, 6), leaf(v_shape, 7)});
  }
  // The first case's batch element 0 has no key at all: its rows of A and Y are exactly 0.
  Tensor A;
  Tensor Y = scaled_dot_product_attention_composed(leaf({2, 3, 4}, 1), leaf({2, 3, 4}, 2),
                                                   leaf({2, 3, 2}, 3), cases[0].mask, &A);
  for (std::int64_t i = 0; i < 3; ++i) {
    for (std::int64_t j = 0; j < 3; ++j) REQUIRE(A.at({0, i, j}) == 0.0);
    for (std::int64_t j = 0; j < 2; ++j) REQUIRE(Y.at({0, i, j}) == 0.0);
  }
}

TEST_CASE("attention is invariant to permuting keys and values together", "[nn][attention]") {
  Generator gen(2);
  Tensor Q = Tensor::randn({3, 4}, gen, DType::Float64), K = Tensor::randn({5, 4}, gen, DType::Float64);
  Tensor V = Tensor::randn({5, 2}, gen, DType::Float64);
  std::vector<std::int64_t> sigma = {3, 0, 4, 1, 2};
  Tensor y = scaled_dot_product_attention(Q, K, V);
  Tensor y_perm = scaled_dot_product_attention(Q, permute_rows(K, 0, sigma), permute_rows(V, 0, sigma));
  REQUIRE(max_abs_diff(y, y_perm) < 1e-12);
  // ... but not to permuting the keys alone (the test can fail).
  Tensor y_keys_only = scaled_dot_product_attention(Q, permute_rows(K, 0, sigma), V);
  REQUIRE(max_abs_diff(y, y_keys_only) > 1e-3);
}

TEST_CASE("attention is equivariant to permuting the queries", "[nn][attention]") {
  Generator gen(3);
  Tensor Q = Tensor::randn({4, 3}, gen, DType::Float64), K = Tensor::randn({5, 3}, gen, DType::Float64);
  Tensor V = Tensor::randn({5, 2}, gen, DType::Float64);
  std::vector<std::int64_t> sigma = {2, 0, 3, 1};
  Tensor y = scaled_dot_product_attention(Q, K, V);
  Tensor y_of_perm = scaled_dot_product_attention(permute_rows(Q, 0, sigma), K, V);
  REQUIRE(max_abs_diff(y_of_perm, permute_rows(y, 0, sigma)) < 1e-12);
}

TEST_CASE("self-attention is equivariant to permuting X; cross-attention invariant to "
          "permuting X'", "[nn][attention]") {
  Generator gen(4);
  SelfAttention self_attn({.d_x = 6, .d_k = 4, .d_v = 5}, gen);
  Attention cross({.d_x = 6, .d_q = 4, .d_v = 5}, gen);
  self_attn.to(DType::Float64);
  cross.to(DType::Float64);
  Tensor X = Tensor::randn({5, 6}, gen, DType::Float64);
  Tensor Xp = Tensor::randn({7, 6}, gen, DType::Float64);
  Tensor Q = Tensor::randn({5, 4}, gen, DType::Float64);
  std::vector<std::int64_t> sigma = {4, 2, 0, 1, 3};
  std::vector<std::int64_t> tau = {6, 5, 0, 2, 1, 3, 4};
  Tensor y = self_attn.forward(X);
  REQUIRE(max_abs_diff(self_attn.forward(permute_rows(X, 0, sigma)), permute_rows(y, 0, sigma)) < 1e-12);
  Tensor c = cross.forward(Q, Xp);
  REQUIRE(max_abs_diff(cross.forward(Q, permute_rows(Xp, 0, tau)), c) < 1e-12);
  REQUIRE(max_abs_diff(cross.forward(permute_rows(Q, 0, sigma), Xp), permute_rows(c, 0, sigma)) < 1e-12);
}

TEST_CASE("Attention and SelfAttention pass gradcheck, N_Q != N_X, batch > 1",
          "[nn][attention]") {
  Generator gen(5);
  Attention attn({.d_x = 6, .d_q = 4, .d_v = 3}, gen);
  attn.to(DType::Float64);
  std::vector<Tensor> inputs = {leaf({2, 3, 4}, 1), leaf({2, 5, 6}, 2), attn.W_K, attn.W_V};
  require_gradcheck([&](const std::vector<Tensor>& in) { return attn.forward(in[0], in[1]); }, inputs);
  SelfAttention sa({.d_x = 6, .d_k = 4, .d_v = 3}, gen);
  sa.to(DType::Float64);
  Tensor kp = padding({0, 0, 0, 1, 0, 0, 0, 0}, 2, 4);
  require_gradcheck([&](const std::vector<Tensor>& in) {
    return sa.forward(in[0], {.key_padding = kp, .causal = true});
  }, {leaf({2, 4, 6}, 3), sa.W_Q, sa.W_K, sa.W_V});
}

TEST_CASE("attention misuse gives clear errors", "[nn][attention]") {
  Tensor q = Tensor::ones({2, 3, 4}), k = Tensor::ones({2, 5, 4}), v = Tensor::ones({2, 5, 6});
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, Tensor::ones({2, 5, 3}), v),
                      Contains("same width d_k (4 vs 3)"));
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, k, Tensor::ones({2, 4, 6})),
                      Contains("keys and values must be as many (5 vs 4)"));
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, k, v, {.key_padding = Tensor::zeros({2, 4})}),
                      Contains("key padding mask (2, 4) does not fit"));
}

TEST_CASE("attention weights handed back and then changed make backward fail",
          "[nn][attention]") {
  Generator gen(5);
  Tensor Q = Tensor::randn({1, 3, 4}, gen).requires_grad_();
  Tensor K = Tensor::randn({1, 3, 4}, gen), V = Tensor::randn({1, 3, 4}, gen);
  Tensor A;
  Tensor Y = nn::scaled_dot_product_attention(Q, K, V, {}, &A);
  A.fill_(0);  // the backward rule reads A: dQ would be computed from zeros
  REQUIRE_THROWS_WITH(sum(Y).backward(),
                      Contains("saved output 0 (1, 3, 3) of 'scaled_dot_product_attention'"));
}
