#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/drop_path.h"
#include "nn/transformer_encoder_block.h"
#include "nn/vision_transformer.h"
#include "tests/support/gradcheck.h"
#include "tests/support/same_parameters.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("drop_path is the identity in evaluation and for p = 0", "[nn][drop_path]") {
  Generator gen(1);
  Tensor x = Tensor::randn({4, 3, 5}, gen);
  REQUIRE(drop_path(x, 0.5, false, gen).shares_storage_with(x));
  REQUIRE(drop_path(x, 0.0, true, gen).shares_storage_with(x));
}

TEST_CASE("drop_path drops whole rows and keeps the expectation", "[nn][drop_path]") {
  const double p = 0.3;
  Generator gen(7);
  const std::int64_t B = 20000;
  Tensor x = Tensor::ones({B, 2, 3}, DType::Float64);
  Tensor y = drop_path(x, p, true, gen);
  std::int64_t dropped = 0;
  double total = 0;
  for (std::int64_t b = 0; b < B; ++b) {
    const double first = y.flat(b * 6);
    for (std::int64_t i = 1; i < 6; ++i) REQUIRE(y.flat(b * 6 + i) == first);  // one mask per row
    if (first == 0) ++dropped;
    else REQUIRE(first == Approx(1.0 / (1.0 - p)));
    total += first;
  }
  // Binomial(20000, 0.3): standard deviation ~65; allow ~6 of them.
  REQUIRE(std::abs(static_cast<double>(dropped) - p * B) < 400);
  // E[y] = x: the mean of the row scales is 1 (standard error ~0.005).
  REQUIRE(total / B == Approx(1.0).margin(0.03));
}

TEST_CASE("drop_path's gradient is the same per-row mask (gradcheck)", "[nn][drop_path]") {
  {  // The mask gradcheck sees keeps some rows and drops others.
    Generator g(11);
    const Tensor m = drop_path(Tensor::ones({8, 1}, DType::Float64), 0.5, true, g);
    int kept = 0;
    for (std::int64_t b = 0; b < 8; ++b) kept += m.flat(b) != 0;
    REQUIRE(kept > 0);
    REQUIRE(kept < 8);
  }
  require_gradcheck([](const std::vector<Tensor>& in) {
    Generator g(11);  // the same mask on every evaluation
    return drop_path(in[0], 0.5, true, g) * in[0];
  }, {leaf({8, 2, 3}, 5)});
  REQUIRE_THROWS_WITH(drop_path(Tensor::ones({2}), 1.0, true, *std::make_unique<Generator>(0)),
                      Contains("drop_path: p must be in [0, 1)"));
}

TEST_CASE("an encoder block with drop path: eval unchanged, training drops branches",
          "[nn][drop_path]") {
  Generator g1(3), g2(3);
  TransformerEncoderBlock plain({.dim = 8, .heads = 2, .mlp_dim = 16}, g1);
  TransformerEncoderBlock dropping({.dim = 8, .heads = 2, .mlp_dim = 16, .drop_path = 0.5}, g2);
  require_same_parameters(plain, dropping);
  Generator gx(4);
  Tensor x = Tensor::randn({16, 5, 8}, gx);
  plain.eval();
  dropping.eval();
  REQUIRE(dropping.forward(x).to_vector() == plain.forward(x).to_vector());
  dropping.train();
  Tensor y = dropping.forward(x);
  // Rows whose both branches were dropped come out as they went in.
  std::int64_t unchanged = 0;
  for (std::int64_t b = 0; b < 16; ++b) {
    bool same = true;
    for (std::int64_t i = 0; i < 40; ++i) same = same && y.flat(b * 40 + i) == x.flat(b * 40 + i);
    unchanged += same;
  }
  REQUIRE(unchanged > 0);
  REQUIRE(unchanged < 16);
}

TEST_CASE("a ViT with drop path has the same parameters and rates rising with depth",
          "[nn][drop_path]") {
  VitConfig c;
  c.depth = 3;
  Generator g1(5), g2(5);
  VisionTransformer plain(c, g1);
  c.drop_path = 0.2;
  VisionTransformer dropping(c, g2);
  require_same_parameters(plain, dropping);
  REQUIRE(!dropping.backbone->blocks[0]->drop_path);  // rate 0
  REQUIRE(dropping.backbone->blocks[1]->drop_path->p() == Approx(0.1));
  REQUIRE(dropping.backbone->blocks[2]->drop_path->p() == Approx(0.2));
  // Old configurations without the field read as drop_path 0.
  REQUIRE(VitConfig::from_json(R"({"image_size":28,"channels":1,"patch":7,"dim":64,"depth":6,)"
                               R"("heads":4,"mlp_dim":128,"num_classes":10})").drop_path == 0.0);
  REQUIRE(VitConfig::from_json(c.to_json()).drop_path == 0.2);
}
