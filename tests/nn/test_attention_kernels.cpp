#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/uwaga.h"
#include "nn/attention_kernels.h"
#include "nn/multi_head_attention.h"
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
