#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/uwaga.h"
#include "nn/attention_kernels.h"
#include "nn/multi_head_attention.h"
#include "nn/scaled_dot_product_attention.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;

TEST_CASE("attention_heads equals split_heads, attention per head and merge_heads; gradcheck",
          "[nn][mha][attention]") {
  const std::int64_t B = 2, T = 4, S = 3, h = 2, d = 3, D = h * d;
  Tensor pad_t = Tensor::from_vector(std::vector<double>{0, 0, 0, 1, 0, 0, 0, 0}, {B, T},
                                     DType::Float64);
  Tensor pad_s = Tensor::from_vector(std::vector<double>{0, 0, 1, 0, 0, 0}, {B, S}, DType::Float64);
  struct Case { const char* name; AttentionMask self_mask, cross_mask; };
  std::vector<Case> cases = {
      {"no mask", {}, {}},
      {"causal", {.causal = true}, {.causal = true}},
      {"padded", {.key_padding = pad_t}, {.key_padding = pad_s}},
      {"causal+padded", {.key_padding = pad_t, .causal = true},
       {.key_padding = pad_s, .causal = true}}};
  for (auto& c : cases) {
    INFO(c.name);
    // Self-attention on packed [Q | K | V].
    AttentionMask self_mask = c.self_mask, cross_mask = c.cross_mask;
    Tensor qkv1 = leaf({B, T, 3 * D}, 1), qkv2 = leaf({B, T, 3 * D}, 1);
    Tensor a1, a2;
    Tensor y1 = attention_heads(qkv1, h, self_mask, &a1);
    std::vector<Tensor> parts = chunk(qkv2, 3, -1);  // Q, K, V
    Tensor y2 = merge_heads(scaled_dot_product_attention(
        split_heads(parts[0], h), split_heads(parts[1], h), split_heads(parts[2], h), self_mask,
        &a2));
    REQUIRE(y1.shape() == Shape{B, T, D});
    REQUIRE(a1.shape() == Shape{B, h, T, T});
    REQUIRE(max_abs_diff(y1, y2) < 1e-13);
    REQUIRE(max_abs_diff(a1, a2) < 1e-13);
    Tensor up = leaf(y1.shape(), 2).detach();
    y1.backward(up);
    y2.backward(up);
    REQUIRE(max_abs_diff(qkv1.grad(), qkv2.grad()) < 1e-13);
    require_gradcheck([self_mask](const std::vector<Tensor>& in) {
      return attention_heads(in[0], h, self_mask);
    }, {leaf({B, T, 3 * D}, 3)});

    // Cross-attention on q and packed [K | V].
    Tensor q1 = leaf({B, T, D}, 4), kv1 = leaf({B, S, 2 * D}, 5);
    Tensor q2 = leaf({B, T, D}, 4), kv2 = leaf({B, S, 2 * D}, 5);
    Tensor c1 = attention_heads(q1, kv1, h, cross_mask, &a1);
    std::vector<Tensor> kv_parts = chunk(kv2, 2, -1);  // K, V
    Tensor c2 = merge_heads(scaled_dot_product_attention(
        split_heads(q2, h), split_heads(kv_parts[0], h), split_heads(kv_parts[1], h), cross_mask,
        &a2));
    REQUIRE(a1.shape() == Shape{B, h, T, S});
    REQUIRE(max_abs_diff(c1, c2) < 1e-13);
    REQUIRE(max_abs_diff(a1, a2) < 1e-13);
    Tensor up_c = leaf(c1.shape(), 6).detach();
    c1.backward(up_c);
    c2.backward(up_c);
    REQUIRE(max_abs_diff(q1.grad(), q2.grad()) < 1e-13);
    REQUIRE(max_abs_diff(kv1.grad(), kv2.grad()) < 1e-13);
    require_gradcheck([cross_mask](const std::vector<Tensor>& in) {
      return attention_heads(in[0], in[1], h, cross_mask);
    }, {leaf({B, T, D}, 7), leaf({B, S, 2 * D}, 8)});
  }
}

TEST_CASE("attention_heads names the shapes at fault", "[nn][mha][attention]") {
  REQUIRE_THROWS_WITH(attention_heads(Tensor::ones({2, 3, 10}), 2),
                      Catch::Contains("qkv (2, 3, 10) with 2 heads: expected (B, T, 3·h·d)"));
  REQUIRE_THROWS_WITH(attention_heads(Tensor::ones({2, 3, 4}), Tensor::ones({2, 5, 6}), 2),
                      Catch::Contains("q (2, 3, 4), kv (2, 5, 6) with 2 heads"));
  REQUIRE_THROWS_WITH(attention_heads(Tensor::ones({2, 3, 12}), 2,
                                      {.key_padding = Tensor::zeros({2, 4})}),
                      Catch::Contains("key padding mask (2, 4) does not fit qkv (2, 3, 12)"));
}

TEST_CASE("fused attention agrees with the composed formula over more rows than a softmax block",
          "[nn][mha][attention]") {
  // masked_softmax_rows works through blocks of rows (58 rows of 70 keys in float32); 70 queries
  // make a second, partial block.
  // Float32 as in training, against the composed path (softmax of primitives) in float64.
  const std::int64_t B = 2, T = 70, h = 2, d = 8, D = h * d;
  std::vector<double> pad(B * T, 0.0);
  for (std::int64_t j = 60; j < T; ++j) pad[T + j] = 1;  // the second element's last 10 keys
  Tensor pad_t = Tensor::from_vector(pad, {B, T}, DType::Float64);
  for (const AttentionMask& mask : {AttentionMask{}, AttentionMask{.causal = true},
                                    AttentionMask{.key_padding = pad_t, .causal = true}}) {
    INFO("causal " << mask.causal << " padded " << mask.key_padding.defined());
    Tensor qkv64 = leaf({B, T, 3 * D}, 9);
    Tensor qkv32 = qkv64.detach().to(DType::Float32).requires_grad_();
    Tensor y = attention_heads(qkv32, h, mask);
    std::vector<Tensor> parts = chunk(qkv64, 3, -1);
    Tensor ref = merge_heads(scaled_dot_product_attention_composed(
        split_heads(parts[0], h), split_heads(parts[1], h), split_heads(parts[2], h), mask));
    CHECK(max_abs_diff(y.to(DType::Float64), ref) < 1e-5);
    Tensor up = leaf(y.shape(), 10).detach();
    y.backward(up.to(DType::Float32));
    ref.backward(up);
    CHECK(max_abs_diff(qkv32.grad().to(DType::Float64), qkv64.grad()) < 1e-4);
  }
}

TEST_CASE("fused attention: NaN scores make their own row of weights NaN, not 0 as a masked row",
          "[nn][mha][attention]") {
  // A NaN in a query makes every score of its row NaN. The softmax's row maximum skips NaN (as
  // std::max does), so the row's maximum is −∞ like a fully masked row's, whose weights are 0;
  // the NaN row must stay NaN (as PyTorch's softmax leaves it) and leave the others alone.
  // 40 keys: two full vector lanes of the row maximum and a tail.
  const std::int64_t B = 1, T = 40, h = 2, d = 4, D = h * d;
  Tensor qkv = leaf({B, T, 3 * D}, 11).detach().to(DType::Float32);
  qkv.data<float>()[3 * (3 * D) + 1] = std::numeric_limits<float>::quiet_NaN();  // Q, query 3, head 0
  Tensor a;
  attention_heads(qkv, h, {}, &a);  // A (1, 2, 40, 40)
  const float* w = a.data<float>();
  for (std::int64_t head = 0; head < h; ++head)
    for (std::int64_t i = 0; i < T; ++i) {
      const bool nan_row = head == 0 && i == 3;
      double total = 0;
      for (std::int64_t j = 0; j < T; ++j) {
        const float v = w[(head * T + i) * T + j];
        REQUIRE(std::isnan(v) == nan_row);
        total += v;
      }
      if (!nan_row) REQUIRE(std::abs(total - 1) < 1e-5);
    }
}

namespace {

// The fused kernel (through scaled_dot_product_attention) against the plain loops of
// nn/scaled_dot_product_attention.cpp, batch element by batch element: Q (B, T, d_k),
// K (B, S, d_k), V (B, S, d_v), forward (Y and A) and backward (dQ, dK, dV). `q_scale` multiplies
// the queries (huge or tiny scores); `nan_query` (≥ 0) puts a NaN into that query of element 0.
struct KernelCase {
  std::int64_t B, T, S, dk, dv;
  bool causal = false;
  std::vector<unsigned char> pad = {};  // (B, S) or empty
  double q_scale = 1;
  std::int64_t nan_query = -1;
};

// a and b agree within tol·(1 + |b|), NaN where the other is NaN.
template <class R>
void require_same(const R* a, const R* b, std::int64_t n, double tol, const char* what) {
  for (std::int64_t i = 0; i < n; ++i) {
    INFO(what << "[" << i << "]: " << a[i] << " against " << b[i]);
    if (std::isnan(b[i])) REQUIRE(std::isnan(a[i]));
    else REQUIRE(std::abs(double(a[i]) - double(b[i])) <= tol * (1 + std::abs(double(b[i]))));
  }
}

template <class R>
void compare_attention_kernels(const KernelCase& c, DType dtype, double tol) {
  Generator gen(11);
  Tensor Q = mul(Tensor::randn({c.B, c.T, c.dk}, gen, dtype), c.q_scale);
  if (c.nan_query >= 0) Q.set({0, c.nan_query, 0}, std::numeric_limits<double>::quiet_NaN());
  Q.requires_grad_();
  Tensor K = Tensor::randn({c.B, c.S, c.dk}, gen, dtype).requires_grad_();
  Tensor V = Tensor::randn({c.B, c.S, c.dv}, gen, dtype).requires_grad_();
  Tensor dY = Tensor::randn({c.B, c.T, c.dv}, gen, dtype);
  AttentionMask mask{.causal = c.causal};
  if (!c.pad.empty()) {
    std::vector<double> p(c.pad.begin(), c.pad.end());
    mask.key_padding = Tensor::from_vector(p, {c.B, c.S}, dtype);
  }
  Tensor A;
  Tensor Y = scaled_dot_product_attention(Q, K, V, mask, &A);
  Y.backward(dY);
  std::vector<R> y(c.T * c.dv), a(c.T * c.S), dq(c.T * c.dk), dk(c.S * c.dk), dv(c.S * c.dv);
  for (std::int64_t b = 0; b < c.B; ++b) {
    INFO("batch element " << b);
    const unsigned char* pad = c.pad.empty() ? nullptr : c.pad.data() + b * c.S;
    const R* q = Q.data<R>() + b * c.T * c.dk;
    const R* k = K.data<R>() + b * c.S * c.dk;
    const R* v = V.data<R>() + b * c.S * c.dv;
    attention_forward_reference(y.data(), a.data(), q, k, v, c.T, c.S, c.dk, c.dv, c.causal, pad);
    require_same(A.data<R>() + b * c.T * c.S, a.data(), c.T * c.S, tol, "A");
    require_same(Y.data<R>() + b * c.T * c.dv, y.data(), c.T * c.dv, tol, "Y");
    if (c.nan_query >= 0) continue;  // NaN spreads through every gradient
    attention_backward_reference(dq.data(), dk.data(), dv.data(),
                                 dY.data<R>() + b * c.T * c.dv, q, k, v, a.data(), c.T, c.S,
                                 c.dk, c.dv);
    require_same(Q.grad().data<R>() + b * c.T * c.dk, dq.data(), c.T * c.dk, tol, "dQ");
    require_same(K.grad().data<R>() + b * c.S * c.dk, dk.data(), c.S * c.dk, tol, "dK");
    require_same(V.grad().data<R>() + b * c.S * c.dv, dv.data(), c.S * c.dv, tol, "dV");
  }
}

template <class R>
void attention_kernel_cases(DType dtype, double tol) {
  // Key 0 of element 0 is padding: with the causal mask, its query 0 sees no key (A = 0, Y = 0).
  const std::vector<unsigned char> pad = {1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0};
  const std::vector<unsigned char> all_padded = {1, 1, 1, 0, 0, 1};
  const std::vector<std::pair<const char*, KernelCase>> cases = {
      {"one query, one key, width 1", {.B = 1, .T = 1, .S = 1, .dk = 1, .dv = 1}},
      {"odd sizes", {.B = 2, .T = 5, .S = 7, .dk = 3, .dv = 5}},
      {"causal", {.B = 2, .T = 7, .S = 7, .dk = 5, .dv = 3, .causal = true}},
      {"padded", {.B = 2, .T = 5, .S = 7, .dk = 3, .dv = 4, .pad = pad}},
      {"causal and padded", {.B = 2, .T = 7, .S = 7, .dk = 3, .dv = 4, .causal = true, .pad = pad}},
      {"every key of element 0 padded",
       {.B = 2, .T = 4, .S = 3, .dk = 2, .dv = 3, .pad = all_padded}},
      {"more rows than one block", {.B = 1, .T = 70, .S = 9, .dk = 4, .dv = 3, .causal = true}},
      // d_k = 1: a score is one product, rounded alike in both, so float32 agrees at ±3e3 too.
      {"huge scores: one-hot weights", {.B = 1, .T = 6, .S = 5, .dk = 1, .dv = 3, .q_scale = 1e3}},
      {"tiny scores: uniform weights",
       {.B = 1, .T = 6, .S = 5, .dk = 4, .dv = 3, .causal = true, .q_scale = 1e-20}},
      {"a NaN query: its row NaN, the others not",
       {.B = 1, .T = 4, .S = 5, .dk = 3, .dv = 2, .nan_query = 2}},
      {"a NaN query that sees one key",
       {.B = 1, .T = 4, .S = 4, .dk = 3, .dv = 2, .causal = true, .nan_query = 0}}};

  for (const auto& [name, c] : cases) {
    INFO(name);
    compare_attention_kernels<R>(c, dtype, tol);
  }
}

}  // namespace

TEST_CASE("the fused attention kernel equals the plain loops", "[nn][attention]") {
  SECTION("float64") { attention_kernel_cases<double>(DType::Float64, 1e-12); }
  SECTION("float32") { attention_kernel_cases<float>(DType::Float32, 2e-5); }
}
