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
