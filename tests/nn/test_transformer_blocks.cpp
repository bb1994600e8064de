#include <catch2/catch.hpp>

#include <cmath>

#include "core/uwaga.h"
#include "nn/embedding.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "nn/mlp.h"
#include "nn/positional_encoding.h"
#include "nn/transformer_decoder_block.h"
#include "nn/transformer_encoder_block.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("Linear and MLP match PyTorch and pass gradcheck", "[nn][mlp][golden]") {
  Generator gen(0);
  Linear lin({.in = 8, .out = 6}, gen);
  check_parity("linear", lin, [&](auto& in) { return lin.forward(in.at("x")); });
  require_gradcheck([&](const std::vector<Tensor>& in) { return lin.forward(in[0]); },
                    with_params({leaf({2, 3, 8}, 1)}, lin));
  MLP mlp({.dim = 8, .hidden = 32}, gen);
  check_parity("mlp", mlp, [&](auto& in) { return mlp.forward(in.at("x")); });
  require_gradcheck([&](const std::vector<Tensor>& in) { return mlp.forward(in[0]); },
                    with_params({leaf({2, 3, 8}, 2)}, mlp));
}

TEST_CASE("MLPOptions names the width at fault", "[nn][mlp]") {
  Generator gen(0);
  REQUIRE_THROWS_WITH(MLP({.dim = 0, .hidden = 32}, gen),
                      Contains("MLPOptions: dim must be positive, got 0"));
  REQUIRE_THROWS_WITH(MLP({.dim = 8, .hidden = -1}, gen),
                      Contains("MLPOptions: hidden must be positive, got -1"));
  MLP tanh_mlp({.dim = 4, .hidden = 6, .gelu = GeluApproximation::tanh}, gen);
  REQUIRE(tanh_mlp.act.approximate == GeluApproximation::tanh);
}

TEST_CASE("the encoder block matches PyTorch and passes gradcheck", "[nn][block][golden]") {
  Generator gen(0);
  TransformerEncoderBlock block({.dim = 8, .heads = 2, .mlp_dim = 32}, gen);
  check_parity("encoder_block", block, [&](auto& in) { return block.forward(in.at("x")); });
  Tensor kp = Tensor::from_vector({0, 0, 0, 0, 0, 0, 0, 1}, {2, 4});
  require_gradcheck([&](const std::vector<Tensor>& in) {
    return block.forward(in[0], {.key_padding = kp});
  }, with_params({leaf({2, 4, 8}, 3)}, block));
}

TEST_CASE("the encoder block with LayerNorm between its branches (CCT's) passes gradcheck",
          "[nn][block]") {
  for (AttentionPath path : {AttentionPath::fast, AttentionPath::reference}) {
    Generator gen(2);
    TransformerEncoderBlock block({.dim = 8, .heads = 2, .mlp_dim = 16, .attention = path,
                                   .norm = BlockNorm::between, .qkv_bias = false},
                                  gen);
    block.to(DType::Float64);
    // Every parameter N(0, 1/D), the LayerNorms' γ and β too: neither branch is negligible
    // beside the residual stream, and a wrong placement of LN₂ cannot hide behind γ = 1, β = 0.
    for (Tensor& p : block.parameters()) init::normal(p, gen, 1.0 / std::sqrt(8.0));
    REQUIRE(!block.attn->qkv->bias.defined());
    Tensor kp = Tensor::from_vector({0, 0, 0, 0, 0, 0, 0, 1}, {2, 4});
    require_gradcheck([&](const std::vector<Tensor>& in) {
      return block.forward(in[0], {.key_padding = kp});
    }, with_params({leaf({2, 4, 8}, 6)}, block));
    // The formula: z′ = LN₂(z + MSA(LN₁(z))), z_out = z′ + MLP(z′).
    Tensor z = leaf({2, 4, 8}, 7).detach();
    Tensor z1 = block.norm2->forward(z + block.attn->forward(block.norm1->forward(z)));
    REQUIRE(max_abs_diff(block.forward(z), z1 + block.mlp->forward(z1)) < 1e-12);
    // Not the pre-LN block's: the same weights there give other numbers.
    Generator same(2);
    TransformerEncoderBlock pre({.dim = 8, .heads = 2, .mlp_dim = 16, .attention = path,
                                 .qkv_bias = false},
                                same);
    pre.to(DType::Float64);
    pre.load_state_dict(block.state_dict());
    REQUIRE(max_abs_diff(pre.forward(z), block.forward(z)) > 1e-3);
  }
}

TEST_CASE("the decoder block matches PyTorch and passes gradcheck", "[nn][block][golden]") {
  Generator gen(0);
  TransformerDecoderBlock block({.dim = 8, .heads = 2, .mlp_dim = 32}, gen);
  Golden g = load_golden("decoder_block");
  Tensor kp = g.get("input.key_padding_mask");
  check_parity("decoder_block", block,
               [&](auto& in) { return block.forward(in.at("x"), in.at("m"), Tensor(), kp); });
  require_gradcheck([&](const std::vector<Tensor>& in) {
    return block.forward(in[0], in[1], Tensor(), kp);
  }, with_params({leaf({2, 4, 8}, 4), leaf({2, 5, 8}, 5)}, block));
}

TEST_CASE("the decoder cannot see the future: changing a later token leaves earlier outputs",
          "[nn][block]") {
  Generator gen(1);
  TransformerDecoderBlock block({.dim = 8, .heads = 2, .mlp_dim = 16}, gen);
  Tensor x = Tensor::randn({1, 5, 8}, gen), m = Tensor::randn({1, 3, 8}, gen);
  Tensor y = block.forward(x, m);
  Tensor x2 = x.clone();
  for (std::int64_t j = 0; j < 8; ++j) x2.set({0, 4, j}, 10.0);
  Tensor y2 = block.forward(x2, m);
  for (std::int64_t t = 0; t < 4; ++t)
    for (std::int64_t j = 0; j < 8; ++j) REQUIRE(y.at({0, t, j}) == y2.at({0, t, j}));
  REQUIRE(y.at({0, 4, 0}) != y2.at({0, 4, 0}));
}

TEST_CASE("positional encodings", "[nn][positional]") {
  Tensor pe = sinusoidal_positional_encoding(50, 16, DType::Float64);
  REQUIRE(pe.shape() == Shape{50, 16});
  REQUIRE_THROWS_WITH(sinusoidal_positional_encoding(3, 4, DType::Int64),
                      Contains("sines need float32 or float64, got int64"));
  REQUIRE(pe.at({0, 0}) == 0.0);  // sin(0)
  REQUIRE(pe.at({0, 1}) == 1.0);  // cos(0)
  REQUIRE(pe.at({3, 4}) == Approx(std::sin(3 / std::pow(10000.0, 4.0 / 16))));
  REQUIRE(pe.at({3, 5}) == Approx(std::cos(3 / std::pow(10000.0, 4.0 / 16))));
  Generator gen(0);
  LearnedPositionalEmbedding pos(10, 4, gen);
  pos.to(DType::Float64);
  require_gradcheck([&](const std::vector<Tensor>& in) { return pos.forward(in[0]); },
                    {leaf({2, 6, 4}, 1), pos.weight});
  REQUIRE_THROWS_WITH(pos.forward(Tensor::zeros({1, 11, 4})),
                      Contains("sequence length 11 exceeds the maximum 10"));
  Embedding emb(7, 4, gen);
  emb.to(DType::Float64);
  Tensor ids = Tensor::from_indices({1, 3, 3, 6}, {2, 2});
  REQUIRE(emb.forward(ids).shape() == Shape{2, 2, 4});
  require_gradcheck([&](const std::vector<Tensor>&) { return emb.forward(ids); }, {emb.weight});
}
