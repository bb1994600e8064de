// Attention dropout (nn/attention_dropout.h): Y = (A ⊙ M) V in training, Y = A V otherwise. The
// fused kernel and the composed formula draw the same mask from the same generator state and
// agree, forward and backward; both pass gradcheck with a fixed mask; p = 0 and evaluation change
// nothing; about p of the weights are dropped, the survivors scaled by 1/(1 − p).
#include <catch2/catch.hpp>

#include <cmath>

#include "core/threads.h"
#include "core/uwaga.h"
#include "nn/attention_kernels.h"
#include "nn/init.h"
#include "nn/multi_head_attention.h"
#include "nn/scaled_dot_product_attention.h"
#include "nn/vision_transformer.h"
#include "tests/support/dropout_in_training.h"
#include "tests/support/gradcheck.h"
#include "tests/support/same_parameters.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

// Y and the gradients of Q, K and V of one attention call with dropout p from Generator(seed),
// backward from a fixed random upstream gradient.
struct DroppedAttention {
  Tensor Y, A, dQ, dK, dV;
};

DroppedAttention attend_dropped(bool fused, const AttentionMask& mask, double p,
                                std::uint64_t seed) {
  Tensor Q = leaf({2, 3, 5, 4}, 1), K = leaf({2, 3, 6, 4}, 2), V = leaf({2, 3, 6, 3}, 3);
  Generator gen(seed);
  const AttentionDropout drop{.p = p, .gen = &gen};
  Tensor A;
  Tensor Y = fused ? scaled_dot_product_attention(Q, K, V, mask, &A, drop)
                   : scaled_dot_product_attention_composed(Q, K, V, mask, &A, drop);
  Y.backward(leaf(Y.shape(), 4).detach());
  return {Y.detach(), A, Q.grad(), K.grad(), V.grad()};
}

}  // namespace

TEST_CASE("attention dropout: the fused kernel and the composed formula drop the same weights "
          "and agree, forward and backward", "[nn][attention][dropout]") {
  const Tensor pad = Tensor::from_vector({0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0}, {2, 6});
  for (const AttentionMask& mask :
       {AttentionMask{}, AttentionMask{.causal = true}, AttentionMask{.key_padding = pad}}) {
    INFO("causal " << mask.causal << ", padded " << mask.key_padding.defined());
    const DroppedAttention fused = attend_dropped(true, mask, 0.3, 17);
    const DroppedAttention composed = attend_dropped(false, mask, 0.3, 17);
    REQUIRE(max_abs_diff(fused.Y, composed.Y) < 1e-12);
    REQUIRE(max_abs_diff(fused.A, composed.A) < 1e-12);  // both return A, undropped
    REQUIRE(max_abs_diff(fused.dQ, composed.dQ) < 1e-12);
    REQUIRE(max_abs_diff(fused.dK, composed.dK) < 1e-12);
    REQUIRE(max_abs_diff(fused.dV, composed.dV) < 1e-12);
    REQUIRE(max(abs(fused.dQ)).item() > 1e-3);  // not two zero gradients agreeing
    // A mask was drawn: without dropout the output differs; another seed draws another mask.
    REQUIRE(max_abs_diff(fused.Y, attend_dropped(true, mask, 0.0, 17).Y) > 1e-3);
    REQUIRE(max_abs_diff(fused.Y, attend_dropped(true, mask, 0.3, 18).Y) > 1e-3);
  }
}

TEST_CASE("attention dropout passes gradcheck with a fixed mask, fused and composed",
          "[nn][attention][dropout]") {
  const Tensor pad = Tensor::from_vector({0, 0, 0, 1, 0, 0, 0, 0}, {2, 4});
  for (bool fused : {true, false})
    for (bool causal : {false, true}) {
      INFO((fused ? "fused" : "composed") << ", causal " << causal);
      const AttentionMask mask{.key_padding = pad, .causal = causal};
      // A fresh generator on every evaluation, so every one drops the same weights.
      require_gradcheck([&](const std::vector<Tensor>& in) {
        Generator gen(11);
        const AttentionDropout drop{.p = 0.4, .gen = &gen};
        return fused ? scaled_dot_product_attention(in[0], in[1], in[2], mask, nullptr, drop)
                     : scaled_dot_product_attention_composed(in[0], in[1], in[2], mask, nullptr,
                                                             drop);
      }, {leaf({2, 2, 3, 4}, 5), leaf({2, 2, 4, 4}, 6), leaf({2, 2, 4, 3}, 7)});
    }
  // The packed heads of self- and cross-attention, read in place from the projections.
  require_gradcheck([](const std::vector<Tensor>& in) {
    Generator gen(12);
    return attention_heads(in[0], 2, {.causal = true}, nullptr, {.p = 0.4, .gen = &gen});
  }, {leaf({2, 4, 3 * 8}, 8)});
  require_gradcheck([](const std::vector<Tensor>& in) {
    Generator gen(13);
    return attention_heads(in[0], in[1], 2, {}, nullptr, {.p = 0.4, .gen = &gen});
  }, {leaf({2, 3, 8}, 9), leaf({2, 5, 2 * 8}, 10)});
}

TEST_CASE("attention dropout drops about p of the weights and scales the rest by 1/(1 - p)",
          "[nn][attention][dropout]") {
  // Q = K = 0 make every weight 1/S, and V = I (d_v = S) makes Y = Ã itself: M_ij / S.
  const double p = 0.2;
  const std::int64_t N = 8, T = 64, S = 64;
  Tensor Q = Tensor::zeros({N, T, 4}, DType::Float64), K = Tensor::zeros({N, S, 4}, DType::Float64);
  Tensor V = Tensor::zeros({N, S, S}, DType::Float64);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t j = 0; j < S; ++j) V.set({n, j, j}, 1.0);
  Generator g1(3), g2(3);
  const Tensor fused = scaled_dot_product_attention(Q, K, V, {}, nullptr, {.p = p, .gen = &g1});
  const Tensor composed =
      scaled_dot_product_attention_composed(Q, K, V, {}, nullptr, {.p = p, .gen = &g2});
  REQUIRE(fused.to_vector() == composed.to_vector());  // the same mask, exactly
  std::int64_t dropped = 0;
  for (std::int64_t i = 0; i < fused.numel(); ++i) {
    const double v = fused.flat(i);
    if (v == 0) ++dropped;
    else REQUIRE(v == Approx(1.0 / ((1.0 - p) * S)));
  }
  // Binomial(32768, 0.2) has standard deviation ~72: allow about 7 of them.
  REQUIRE(std::abs(static_cast<double>(dropped) - p * N * T * S) < 500);
  // Each row of Ã sums to 1 in expectation: over all rows, the mean weight stays 1/S.
  REQUIRE(mean(fused).item() == Approx(1.0 / S).epsilon(0.02));
}

TEST_CASE("attention dropout: p = 0 is the plain attention bit for bit, and draws nothing",
          "[nn][attention][dropout]") {
  Generator data(1);
  Tensor Q = Tensor::randn({2, 3, 5, 4}, data), K = Tensor::randn({2, 3, 6, 4}, data),
         V = Tensor::randn({2, 3, 6, 4}, data);
  Generator gen(9), untouched(9);
  const AttentionDropout off{.p = 0.0, .gen = &gen};
  REQUIRE(scaled_dot_product_attention(Q, K, V, {}, nullptr, off).to_vector() ==
          scaled_dot_product_attention(Q, K, V).to_vector());
  REQUIRE(scaled_dot_product_attention_composed(Q, K, V, {}, nullptr, off).to_vector() ==
          scaled_dot_product_attention_composed(Q, K, V).to_vector());
  REQUIRE(gen.next_u64() == untouched.next_u64());
  // p > 0 without a generator is a mistake the kernel names.
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(Q, K, V, {}, nullptr, {.p = 0.1}),
                      Contains("attention dropout 0.1 needs a generator"));
}

TEST_CASE("multi-head attention with attention dropout: the same weights, eval unchanged, the "
          "two paths agree in training and pass gradcheck", "[nn][mha][dropout]") {
  for (AttentionPath path : {AttentionPath::fast, AttentionPath::reference}) {
    INFO((path == AttentionPath::fast ? "fast" : "reference") << " path");
    Generator g1(3), g2(3);
    MultiHeadAttention plain({.dim = 8, .heads = 2, .path = path}, g1);
    MultiHeadAttention dropping({.dim = 8, .heads = 2, .path = path, .attention_dropout = 0.3}, g2);
    REQUIRE(!plain.attn_drop);
    REQUIRE(dropping.attn_drop->p() == Approx(0.3));
    require_same_parameters(plain, dropping);  // attn_drop has no parameters and draws nothing
    Generator gx(4);
    Tensor x = Tensor::randn({2, 5, 8}, gx);
    const auto expected = plain.forward(x).to_vector();
    dropping.eval();
    REQUIRE(dropping.forward(x).to_vector() == expected);
    dropping.train();
    REQUIRE(dropping.forward(x).to_vector() != expected);

    dropping.to(DType::Float64);
    require_gradcheck([&](const std::vector<Tensor>& in) {
      dropping.attn_drop->generator().seed_with(5);  // the same mask on every evaluation
      return dropping.forward(in[0], AttentionMask{.causal = true});
    }, with_params({leaf({2, 4, 8}, 3)}, dropping));
  }

  // Fast and reference, from the same weights (of order 1) and the same mask seed.
  auto run = [](AttentionPath path) {
    Generator gen(7);
    MultiHeadAttention mha({.dim = 8, .heads = 2, .path = path, .attention_dropout = 0.5}, gen);
    mha.to(DType::Float64);
    for (Tensor& p : mha.parameters()) init::normal(p, gen, 1.0 / std::sqrt(8.0));
    mha.attn_drop->generator().seed_with(21);
    Tensor x = leaf({2, 4, 8}, 1);
    Tensor y = mha.forward(x);
    y.backward(leaf(y.shape(), 2).detach());
    std::vector<Tensor> out{y.detach(), x.grad()};
    for (const Tensor& p : mha.parameters()) out.push_back(p.grad());
    return out;
  };
  const auto fast = run(AttentionPath::fast), reference = run(AttentionPath::reference);
  for (std::size_t i = 0; i < fast.size(); ++i) {
    INFO("tensor " << i << " (0: y, 1: dx, then the parameters' gradients)");
    REQUIRE(max_abs_diff(fast[i], reference[i]) < 1e-12);
  }
}

TEST_CASE("attention dropout's masks do not depend on the thread count",
          "[nn][attention][dropout]") {
  Generator data(2);
  Tensor qkv = Tensor::randn({16, 17, 3 * 32}, data);  // large enough to run on every thread
  const int threads = num_threads();
  std::vector<std::vector<double>> outputs;
  for (int n : {1, 2, 4}) {
    set_num_threads(n);
    Generator gen(8);
    outputs.push_back(attention_heads(qkv, 4, {}, nullptr, {.p = 0.25, .gen = &gen}).to_vector());
  }
  set_num_threads(threads);
  REQUIRE(outputs[0] == outputs[1]);
  REQUIRE(outputs[0] == outputs[2]);
}

TEST_CASE("a ViT with attention dropout: the same weights, masks from the step's seed, old "
          "configurations read as 0", "[nn][dropout]") {
  VitConfig c;
  c.depth = 2;
  Generator g1(5), g2(5);
  VisionTransformer plain(c, g1);
  c.attention_dropout = 0.1;
  VisionTransformer dropping(c, g2);
  require_same_parameters(plain, dropping);
  for (auto& block : dropping.backbone->blocks)
    REQUIRE(block->attn->attn_drop->p() == Approx(0.1));
  require_dropout_in_training_only(plain, dropping);
  REQUIRE(VitConfig::from_json(R"({"image_size":28,"channels":1,"patch":7,"dim":64,"depth":6,)"
                               R"("heads":4,"mlp_dim":128,"num_classes":10})")
              .attention_dropout == 0.0);
  REQUIRE(VitConfig::from_json(c.to_json()).attention_dropout == Approx(0.1));
  c.attention_dropout = 1.0;
  REQUIRE_THROWS_WITH(c.validate(),
                      Contains("vit config: attention dropout must be in [0, 1), got 1"));
}
