#include <catch2/catch.hpp>

#include <cmath>

#include "core/uwaga.h"
#include "nn/init.h"
#include "nn/multi_head_attention.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

const char* path_name(AttentionPath path) {
  return path == AttentionPath::fast ? "fast" : "reference";
}

// What one forward and backward of a float64 MultiHeadAttention gives: the output Y, the kept
// weights A (B, h, T, S), and the gradient of every input and parameter, by name.
struct PathResult {
  Tensor Y, A;
  NamedTensors grads;
};

// Runs MultiHeadAttention on `path` with the weights of seed 7, x (2, 4, 8) and, for
// cross-attention, a memory (2, 5, 8), backward from a fixed random upstream gradient. Every
// weight and bias is drawn from N(0, 1/D), so that scores and gradients are of order 1 (with the
// default init they are ~1e-5, and an absolute tolerance would say little).
PathResult run_on_path(AttentionPath path, bool cross, std::int64_t heads,
                       const AttentionMask& mask) {
  Generator gen(7);
  MultiHeadAttention mha({.dim = 8, .heads = heads, .cross = cross, .path = path}, gen);
  mha.to(DType::Float64);
  for (Tensor& p : mha.parameters()) init::normal(p, gen, 1.0 / std::sqrt(8.0));
  mha.keep_attention(true);
  Tensor x = leaf({2, 4, 8}, 1), memory = leaf({2, 5, 8}, 2);
  Tensor Y = cross ? mha.forward(x, memory, mask) : mha.forward(x, mask);
  Y.backward(leaf(Y.shape(), 3).detach());
  PathResult r{Y.detach(), mha.attention(), {{"input x", x.grad()}}};
  if (cross) r.grads.push_back({"input memory", memory.grad()});
  for (const auto& [name, p] : mha.named_parameters()) r.grads.push_back({name, p.grad()});
  return r;
}

}  // namespace

TEST_CASE("multi-head attention: the reference path and the fast path agree, forward and "
          "backward, with and without masks", "[nn][mha]") {
  // Batch element 0 pads its last position, batch element 1 none. "first key padded" leaves
  // query 0 of element 0 no key at all under the causal mask: both paths give it A = 0.
  const Tensor pad_4 = Tensor::from_vector({0, 0, 0, 1, 0, 0, 0, 0}, {2, 4});
  const Tensor first_key_padded = Tensor::from_vector({1, 0, 0, 0, 0, 0, 0, 0}, {2, 4});
  const Tensor pad_5 = Tensor::from_vector({0, 0, 0, 1, 1, 0, 0, 0, 0, 0}, {2, 5});
  struct Case {
    const char* name;
    bool cross;
    AttentionMask mask;
  };
  const std::vector<Case> cases = {
      {"self-attention", false, {}},
      {"causal self-attention", false, {.causal = true}},
      {"padded self-attention", false, {.key_padding = pad_4}},
      {"causal, padded self-attention", false, {.key_padding = pad_4, .causal = true}},
      {"causal, first key padded", false, {.key_padding = first_key_padded, .causal = true}},
      {"cross-attention", true, {}},
      {"padded cross-attention", true, {.key_padding = pad_5}},
      {"causal cross-attention (T < S)", true, {.causal = true}},
  };
  for (const Case& c : cases)
    for (std::int64_t heads : {1, 2, 4}) {
      INFO(c.name << ", " << heads << " heads");
      const PathResult fast = run_on_path(AttentionPath::fast, c.cross, heads, c.mask);
      const PathResult reference = run_on_path(AttentionPath::reference, c.cross, heads, c.mask);
      REQUIRE(max_abs_diff(fast.Y, reference.Y) < 1e-12);
      REQUIRE(max_abs_diff(fast.A, reference.A) < 1e-12);
      REQUIRE(fast.grads.size() == reference.grads.size());
      for (std::size_t i = 0; i < fast.grads.size(); ++i) {
        const auto& [name, g_fast] = fast.grads[i];
        INFO("gradient of " << name);
        REQUIRE(reference.grads[i].first == name);
        REQUIRE(g_fast.defined());
        REQUIRE(max_abs_diff(g_fast, reference.grads[i].second) < 1e-12);
        REQUIRE(max(abs(g_fast)).item() > 1e-3);  // not two zero gradients agreeing
      }
    }
}

TEST_CASE("multi-head self-attention passes gradcheck for h = 1, 2, 4, with masks, on both paths",
          "[nn][mha]") {
  for (AttentionPath path : {AttentionPath::fast, AttentionPath::reference})
    for (std::int64_t h : {1, 2, 4})
      for (bool causal : {false, true})
        for (bool padded : {false, true}) {
          INFO(path_name(path) << " path, heads " << h << " causal " << causal << " padded "
                               << padded);
          Generator gen(h);
          MultiHeadAttention mha({.dim = 8, .heads = h, .path = path}, gen);
          mha.to(DType::Float64);
          Tensor kp = padded ? Tensor::from_vector({0, 0, 0, 0, 0, 0, 1, 1}, {2, 4}) : Tensor();
          const AttentionMask mask{.key_padding = kp, .causal = causal};
          require_gradcheck([&](const std::vector<Tensor>& in) {
            return mha.forward(in[0], mask);
          }, with_params({leaf({2, 4, 8}, 10 + h)}, mha));
        }
}

TEST_CASE("multi-head attention without qkv bias (CCT's) passes gradcheck on both paths",
          "[nn][mha]") {
  for (AttentionPath path : {AttentionPath::fast, AttentionPath::reference})
    for (bool cross : {false, true}) {
      INFO(path_name(path) << " path, " << (cross ? "cross" : "self") << "-attention");
      Generator gen(3);
      MultiHeadAttention mha({.dim = 8, .heads = 2, .cross = cross, .path = path,
                              .qkv_bias = false},
                             gen);
      mha.to(DType::Float64);
      for (Tensor& p : mha.parameters()) init::normal(p, gen, 1.0 / std::sqrt(8.0));
      // Q = X W_Q exactly: no bias on the query, key and value projections; W_O keeps its own.
      std::vector<std::string> names;
      for (const auto& [name, p] : mha.named_parameters()) names.push_back(name);
      const std::vector<std::string> expected =
          cross ? std::vector<std::string>{"q.weight", "kv.weight", "proj.weight", "proj.bias"}
                : std::vector<std::string>{"qkv.weight", "proj.weight", "proj.bias"};
      REQUIRE(names == expected);
      const AttentionMask mask{.key_padding = Tensor::from_vector({0, 0, 0, 1, 0, 0, 0, 0}, {2, 4})};
      if (cross)
        require_gradcheck([&](const std::vector<Tensor>& in) {
          return mha.forward(in[0], in[1], mask);
        }, with_params({leaf({2, 3, 8}, 4), leaf({2, 4, 8}, 5)}, mha));
      else
        require_gradcheck([&](const std::vector<Tensor>& in) {
          return mha.forward(in[0], mask);
        }, with_params({leaf({2, 4, 8}, 4)}, mha));
    }
}

TEST_CASE("multi-head cross-attention passes gradcheck, T != S, on both paths", "[nn][mha]") {
  for (AttentionPath path : {AttentionPath::fast, AttentionPath::reference})
    for (std::int64_t h : {1, 2, 4}) {
      INFO(path_name(path) << " path, heads " << h);
      Generator gen(h);
      MultiHeadAttention mha({.dim = 8, .heads = h, .cross = true, .path = path}, gen);
      mha.to(DType::Float64);
      const AttentionMask mask{.key_padding =
                                   Tensor::from_vector({0, 0, 0, 0, 1, 0, 0, 0, 0, 0}, {2, 5})};
      require_gradcheck([&](const std::vector<Tensor>& in) {
        return mha.forward(in[0], in[1], mask);
      }, with_params({leaf({2, 3, 8}, 1), leaf({2, 5, 8}, 2)}, mha));
    }
}

TEST_CASE("MultiHeadAttention matches PyTorch on both paths: self, causal, padded, cross",
          "[nn][mha][golden]") {
  for (AttentionPath path : {AttentionPath::fast, AttentionPath::reference}) {
    INFO(path_name(path) << " path");
    for (const char* name : {"mha_self", "mha_self_causal", "mha_self_padded"}) {
      Golden g = load_golden(name);
      Generator gen(0);
      MultiHeadAttention mha(
          {.dim = g.metadata_int("dim"), .heads = g.metadata_int("heads"), .path = path}, gen);
      mha.keep_attention(true);
      AttentionMask mask;
      mask.causal = g.metadata_int("causal") != 0;
      if (g.has("input.key_padding_mask")) mask.key_padding = g.get("input.key_padding_mask");
      check_parity(name, mha, [&](auto& in) { return mha.forward(in.at("x"), mask); });
      check_close(std::string(name) + " attention weights", mha.attention(),
                  g.get("output.attn"), 1e-10, 1e-8);
    }
    for (const char* name : {"mha_cross", "mha_cross_padded"}) {
      Golden g = load_golden(name);
      Generator gen(0);
      MultiHeadAttention mha({.dim = g.metadata_int("dim"),
                              .heads = g.metadata_int("heads"),
                              .cross = true,
                              .path = path},
                             gen);
      mha.keep_attention(true);
      AttentionMask mask;
      if (g.has("input.key_padding_mask")) mask.key_padding = g.get("input.key_padding_mask");
      check_parity(name, mha,
                   [&](auto& in) { return mha.forward(in.at("x"), in.at("m"), mask); });
      check_close(std::string(name) + " attention weights", mha.attention(),
                  g.get("output.attn"), 1e-10, 1e-8);
    }
  }
}

TEST_CASE("per-head attention weights are kept on request", "[nn][mha]") {
  for (AttentionPath path : {AttentionPath::fast, AttentionPath::reference}) {
    INFO(path_name(path) << " path");
    Generator gen(0);
    MultiHeadAttention mha({.dim = 8, .heads = 4, .path = path}, gen);
    Tensor x = Tensor::randn({2, 5, 8}, gen);
    mha.forward(x);
    REQUIRE_FALSE(mha.attention().defined());
    mha.keep_attention(true);
    mha.forward(x);
    REQUIRE(mha.attention().shape() == Shape{2, 4, 5, 5});
  }
}

TEST_CASE("split_heads and merge_heads are inverses: head i is columns i·d … (i+1)·d",
          "[nn][mha]") {
  Tensor x = reshape(Tensor::arange(0, 2 * 3 * 6), {2, 3, 6});  // (B, T, h·d), h = 2, d = 3
  Tensor heads = split_heads(x, 2);
  REQUIRE(heads.shape() == Shape{2, 2, 3, 3});
  // Batch element 1, head 1 (columns 3 … 5), position 2: x[1, 2, 3:6].
  for (std::int64_t j = 0; j < 3; ++j) REQUIRE(heads.at({1, 1, 2, j}) == x.at({1, 2, 3 + j}));
  REQUIRE(max_abs_diff(merge_heads(heads), x) == 0);
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
  REQUIRE_THROWS_WITH(split_heads(Tensor::ones({1, 4, 12}), 0),
                      Contains("split_heads: heads must be positive, got 0"));
  REQUIRE_THROWS_WITH(split_heads(Tensor::ones({4, 12}), 2),
                      Contains("expects (B, T, h·d) with h = 2, got (4, 12)"));
  REQUIRE_THROWS_WITH(split_heads(Tensor::ones({1, 4, 10}), 3), Contains("got (1, 4, 10)"));
  REQUIRE_THROWS_WITH(merge_heads(Tensor::ones({4, 2, 3})),
                      Contains("merge_heads: expects (B, h, T, d), got (4, 2, 3)"));
}
