#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/dropout.h"
#include "nn/transformer_encoder_block.h"
#include "nn/vision_transformer.h"
#include "tests/support/dropout_in_training.h"
#include "tests/support/gradcheck.h"
#include "tests/support/same_parameters.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("dropout is the identity in evaluation and for p = 0", "[nn][dropout]") {
  Generator gen(1);
  Tensor x = Tensor::randn({4, 5}, gen);
  Tensor eval = dropout(x, 0.5, /*training=*/false, gen);
  REQUIRE(eval.shares_storage_with(x));
  REQUIRE(eval.to_vector() == x.to_vector());
  REQUIRE(dropout(x, 0.0, true, gen).to_vector() == x.to_vector());
}

TEST_CASE("dropout masks are reproducible from the seed", "[nn][dropout]") {
  Tensor x = Tensor::ones({64, 64});
  Generator a(42), b(42), c(43);
  Tensor ya = dropout(x, 0.3, true, a);
  Tensor yb = dropout(x, 0.3, true, b);
  Tensor yc = dropout(x, 0.3, true, c);
  REQUIRE(ya.to_vector() == yb.to_vector());
  REQUIRE(ya.to_vector() != yc.to_vector());
  // The generator advances: a second call from the same generator draws a new mask.
  REQUIRE(dropout(x, 0.3, true, a).to_vector() != ya.to_vector());
}

TEST_CASE("dropout_mask drops element i where the i-th uniform draw is below p", "[nn][dropout]") {
  // The definition, draw by draw, against the mask's integer test (k < ⌈p·2^53⌉ on the draw's 53
  // bits); p·2^53 a whole number (0.5, 0.25) or not (0.1, 1/3), and a p one step above 0.
  for (const double p : {0.0, 0x1.0p-53, 0.1, 0.25, 1.0 / 3.0, 0.5, 0.9})
    for (const DType dtype : {DType::Float32, DType::Float64}) {
      INFO("p " << p << " " << dtype_name(dtype));
      Generator draws(5), masks(5);
      const Tensor mask = dropout_mask({37, 41}, dtype, p, masks);
      for (std::int64_t i = 0; i < mask.numel(); ++i) {
        const bool dropped = draws.uniform() < p;
        REQUIRE((mask.flat(i) == 0.0) == dropped);
        if (!dropped) REQUIRE(mask.flat(i) == Approx(1.0 / (1.0 - p)));
      }
      REQUIRE(masks.next_u64() == draws.next_u64());  // one draw an element, no more
    }
}

TEST_CASE("dropout zeroes about p of the elements and preserves the mean", "[nn][dropout]") {
  const double p = 0.25;
  Generator gen(7);
  Tensor x = Tensor::ones({100000}, DType::Float64);
  Tensor y = dropout(x, p, true, gen);
  std::int64_t zeros = 0;
  for (std::int64_t i = 0; i < y.numel(); ++i) {
    const double v = y.flat(i);
    if (v == 0) ++zeros;
    else REQUIRE(v == Approx(1.0 / (1.0 - p)));  // survivors are scaled up
  }
  // Binomial(1e5, 0.25) has standard deviation ~137: allow about 7 of them.
  REQUIRE(std::abs(static_cast<double>(zeros) - p * 1e5) < 1000);
  REQUIRE(mean(y).item() == Approx(1.0).epsilon(0.02));
}

TEST_CASE("dropout's gradient is the same mask", "[nn][dropout]") {
  Tensor x = Tensor::ones({10, 10}, DType::Float64).requires_grad_();
  Generator gen(3);
  Tensor y = dropout(x, 0.5, true, gen);
  REQUIRE(std::string(y.grad_fn()->op) == "dropout");
  sum(y).backward();
  REQUIRE(x.grad().to_vector() == y.to_vector());  // x = 1, so y is the mask itself

  // gradcheck with a fresh generator on every call, so every evaluation draws the same mask.
  require_gradcheck([](const std::vector<Tensor>& in) {
    Generator g(11);
    return dropout(in[0], 0.4, true, g) * in[0];
  }, {leaf({4, 6}, 5)});
}

TEST_CASE("dropout rejects a bad probability", "[nn][dropout]") {
  Generator gen(0);
  Tensor x = Tensor::ones({3});
  REQUIRE_THROWS_WITH(dropout(x, 1.0, true, gen), Contains("dropout: p must be in [0, 1), got 1"));
  REQUIRE_THROWS_WITH(dropout(x, -0.1, true, gen), Contains("got -0.1"));
  REQUIRE_THROWS_WITH(dropout(x, 1.5, false, gen), Contains("dropout: p must be in [0, 1)"));
  REQUIRE_THROWS_WITH(dropout(Tensor::from_indices({1}, {1}), 0.5, true, gen),
                      Contains("dropout: expects a float32 or float64 tensor"));
}

TEST_CASE("the Dropout module draws its masks from its own generator, and only in training",
          "[nn][dropout]") {
  Tensor x = Tensor::ones({8, 8});
  Dropout a(0.5, /*seed=*/9), b(0.5, /*seed=*/9);
  Generator same(9);
  REQUIRE(a.forward(x).to_vector() == dropout(x, 0.5, true, same).to_vector());
  REQUIRE(a.forward(x).to_vector() != b.forward(x).to_vector());  // a's generator moved on
  a.eval();
  REQUIRE(a.forward(x).shares_storage_with(x));
  REQUIRE(a.p() == 0.5);
  REQUIRE_THROWS_WITH(Dropout(1.0), Contains("Dropout: p must be in [0, 1), got 1"));
}

TEST_CASE("an encoder block with dropout: eval unchanged, training drops elements of the branches",
          "[nn][dropout]") {
  Generator g1(3), g2(3);
  TransformerEncoderBlock plain({.dim = 8, .heads = 2, .mlp_dim = 16}, g1);
  TransformerEncoderBlock dropping({.dim = 8, .heads = 2, .mlp_dim = 16, .dropout = 0.5}, g2);
  REQUIRE(!plain.dropout);
  REQUIRE(dropping.dropout->p() == 0.5);
  require_same_parameters(plain, dropping);
  Generator gx(4);
  Tensor x = Tensor::randn({4, 5, 8}, gx);
  const auto expected = plain.forward(x).to_vector();  // no dropout: training computes the same
  dropping.eval();
  REQUIRE(dropping.forward(x).to_vector() == expected);
  dropping.train();
  // The attention branch alone, dropped by hand with the generator the block will use, then the
  // MLP branch with the same generator moved on: the block is exactly the notes' two lines.
  dropping.dropout->generator().seed_with(21);
  const Tensor y = dropping.forward(x);
  Generator masks(21);
  Tensor z1 = dropout(plain.attn->forward(plain.norm1->forward(x)), 0.5, true, masks) + x;
  Tensor z2 = dropout(plain.mlp->forward(plain.norm2->forward(z1)), 0.5, true, masks) + z1;
  REQUIRE(y.to_vector() == z2.to_vector());
  REQUIRE(y.to_vector() != expected);
  REQUIRE_THROWS_WITH(TransformerEncoderBlock({.dim = 8, .heads = 2, .mlp_dim = 16, .dropout = 1}, g1),
                      Contains("dropout must be in [0, 1), got 1"));
}

TEST_CASE("an encoder block with dropout passes gradcheck in training (fixed masks)",
          "[nn][dropout]") {
  Generator gen(0);
  TransformerEncoderBlock block({.dim = 8, .heads = 2, .mlp_dim = 16, .dropout = 0.3}, gen);
  block.to(DType::Float64);
  require_gradcheck([&](const std::vector<Tensor>& in) {
    block.dropout->generator().seed_with(5);  // the same masks on every evaluation
    return block.forward(in[0]);
  }, with_params({leaf({2, 4, 8}, 3)}, block));
}

TEST_CASE("a ViT with dropout: the same weights, dropout on z_0 and in every block",
          "[nn][dropout]") {
  VitConfig c;
  c.depth = 2;
  Generator g1(5), g2(5);
  VisionTransformer plain(c, g1);
  c.dropout = 0.1;
  VisionTransformer dropping(c, g2);
  require_same_parameters(plain, dropping);
  REQUIRE(!plain.backbone->dropout);
  REQUIRE(dropping.backbone->dropout->p() == Approx(0.1));
  for (auto& block : dropping.backbone->blocks) REQUIRE(block->dropout->p() == Approx(0.1));
  require_dropout_in_training_only(plain, dropping);
  // Configurations from before dropout read as dropout 0; a saved one keeps it.
  REQUIRE(VitConfig::from_json(R"({"image_size":28,"channels":1,"patch":7,"dim":64,"depth":6,)"
                               R"("heads":4,"mlp_dim":128,"num_classes":10})").dropout == 0.0);
  REQUIRE(VitConfig::from_json(c.to_json()).dropout == Approx(0.1));
  c.dropout = -0.5;
  REQUIRE_THROWS_WITH(c.validate(), Contains("vit config: dropout must be in [0, 1), got -0.5"));
}
