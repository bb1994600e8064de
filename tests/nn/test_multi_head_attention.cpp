#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/multi_head_attention.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("multi-head self-attention passes gradcheck for h = 1, 2, 4, with masks",
          "[nn][mha]") {
  for (std::int64_t h : {1, 2, 4})
    for (bool causal : {false, true})
      for (bool padded : {false, true}) {
        INFO("heads " << h << " causal " << causal << " padded " << padded);
        Generator gen(h);
        MultiHeadAttention mha({.dim = 8, .heads = h}, gen);
        mha.to(DType::Float64);
        Tensor kp = padded ? Tensor::from_vector({0, 0, 0, 0, 0, 0, 1, 1}, {2, 4}) : Tensor();
        require_gradcheck([&](const std::vector<Tensor>& in) {
          return mha.forward(in[0], {.key_padding = kp, .causal = causal});
        }, with_params({leaf({2, 4, 8}, 10 + h)}, mha));
      }
}

TEST_CASE("multi-head cross-attention passes gradcheck, T != S", "[nn][mha]") {
  for (std::int64_t h : {1, 2, 4}) {
    INFO("heads " << h);
    Generator gen(h);
    MultiHeadAttention mha({.dim = 8, .heads = h, .cross = true}, gen);
    mha.to(DType::Float64);
    Tensor kp = Tensor::from_vector({0, 0, 0, 0, 1, 0, 0, 0, 0, 0}, {2, 5});
    require_gradcheck([&](const std::vector<Tensor>& in) {
      return mha.forward(in[0], in[1], {.key_padding = kp});
    }, with_params({leaf({2, 3, 8}, 1), leaf({2, 5, 8}, 2)}, mha));
  }
}

TEST_CASE("MultiHeadAttention matches PyTorch: self, causal, padded, cross",
          "[nn][mha][golden]") {
  for (const char* name : {"mha_self", "mha_self_causal", "mha_self_padded"}) {
    Golden g = load_golden(name);
    Generator gen(0);
    MultiHeadAttention mha({.dim = g.metadata_int("dim"), .heads = g.metadata_int("heads")}, gen);
    mha.keep_attention(true);
    AttentionMask mask;
    mask.causal = g.metadata_int("causal") != 0;
    if (g.has("input.key_padding_mask")) mask.key_padding = g.get("input.key_padding_mask");
    check_parity(name, mha, [&](auto& in) { return mha.forward(in.at("x"), mask); });
    check_close(std::string(name) + " attention weights", mha.attention(), g.get("output.attn"),
                1e-10, 1e-8);
  }
  for (const char* name : {"mha_cross", "mha_cross_padded"}) {
    Golden g = load_golden(name);
    Generator gen(0);
    MultiHeadAttention mha(
        {.dim = g.metadata_int("dim"), .heads = g.metadata_int("heads"), .cross = true}, gen);
    mha.keep_attention(true);
    AttentionMask mask;
    if (g.has("input.key_padding_mask")) mask.key_padding = g.get("input.key_padding_mask");
    check_parity(name, mha, [&](auto& in) { return mha.forward(in.at("x"), in.at("m"), mask); });
    check_close(std::string(name) + " attention weights", mha.attention(), g.get("output.attn"),
                1e-10, 1e-8);
  }
}

TEST_CASE("per-head attention weights are kept on request", "[nn][mha]") {
  Generator gen(0);
  MultiHeadAttention mha({.dim = 8, .heads = 4}, gen);
  Tensor x = Tensor::randn({2, 5, 8}, gen);
  mha.forward(x);
  REQUIRE_FALSE(mha.attention().defined());
  mha.keep_attention(true);
  mha.forward(x);
  REQUIRE(mha.attention().shape() == Shape{2, 4, 5, 5});
}

TEST_CASE("MultiHeadAttention misuse gives clear errors", "[nn][mha]") {
  Generator gen(0);
  REQUIRE_THROWS_WITH(MultiHeadAttention({.dim = 10, .heads = 4}, gen),
                      Contains("MultiHeadAttentionOptions: dim 10 is not divisible by heads 4"));
  REQUIRE_THROWS_WITH(MultiHeadAttention({.dim = 8, .heads = 0}, gen),
                      Contains("MultiHeadAttentionOptions: heads must be positive, got 0"));
  REQUIRE_THROWS_WITH(MultiHeadAttention({.heads = 2}, gen),
                      Contains("MultiHeadAttentionOptions: dim must be positive, got 0"));
  MultiHeadAttention self_attn({.dim = 8, .heads = 2}, gen);
  REQUIRE_THROWS_WITH(self_attn.forward(Tensor::ones({2, 3, 6})),
                      Contains("input has shape (2, 3, 6), expected (B, T, 8)"));
  REQUIRE_THROWS_WITH(self_attn.forward(Tensor::ones({2, 3, 8}), Tensor::ones({2, 3, 8})),
                      Contains("this layer is self-attention"));
  MultiHeadAttention cross({.dim = 8, .heads = 2, .cross = true}, gen);
  REQUIRE_THROWS_WITH(cross.forward(Tensor::ones({2, 3, 8}), Tensor::ones({3, 4, 8})),
                      Contains("different batch sizes"));
  REQUIRE_THROWS_WITH(split_heads(Tensor::ones({1, 4, 12}), 0, 2), Contains("must be positive"));
  REQUIRE_THROWS_WITH(split_heads(Tensor::ones({1, 4, 12}), 3, 0), Contains("must be positive"));
  REQUIRE_THROWS_WITH(split_heads(Tensor::ones({4, 12}), 3, 2),
                      Contains("expects (B, T, n·h·d) with n = 3 and h = 2, got (4, 12)"));
  REQUIRE_THROWS_WITH(split_heads(Tensor::ones({1, 4, 10}), 3, 2), Contains("got (1, 4, 10)"));
  REQUIRE_THROWS_WITH(merge_heads(Tensor::ones({4, 2, 3})),
                      Contains("merge_heads: expects (B, h, T, d), got (4, 2, 3)"));
}

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
    std::vector<Tensor> parts = split_heads(qkv2, 3, h);
    Tensor y2 = merge_heads(scaled_dot_product_attention(parts[0], parts[1], parts[2], self_mask, &a2));
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
    std::vector<Tensor> kv_parts = split_heads(kv2, 2, h);
    Tensor c2 = merge_heads(scaled_dot_product_attention(split_heads(q2, 1, h)[0], kv_parts[0],
                                                         kv_parts[1], cross_mask, &a2));
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
