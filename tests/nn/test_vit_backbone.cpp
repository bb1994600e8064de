#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/vit_backbone.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {
// A non-square image (8 × 12, patch 4: a 2 × 3 grid) without a class token.
VitBackboneOptions wide_options() {
  return {.image_height = 8, .image_width = 12, .channels = 2, .patch = 4, .dim = 8, .depth = 2,
          .heads = 2, .mlp_dim = 16, .class_token = false};
}
}  // namespace

TEST_CASE("patchify on a non-square image: raster order over the (H/P) × (W/P) grid",
          "[nn][vit_backbone]") {
  // Image (1, 1, 4, 6): value = 10·row + column; patch 2 makes a 2 × 3 grid.
  Tensor img = Tensor::empty({1, 1, 4, 6});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) img.set({0, 0, i, j}, 10 * i + j);
  Tensor p = patchify(img, 2);
  REQUIRE(p.shape() == Shape{1, 6, 4});
  // Patch n = r·3 + c starts at pixel (2r, 2c).
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) {
      const int n = r * 3 + c;
      REQUIRE(p.at({0, n, 0}) == 10 * (2 * r) + 2 * c);
      REQUIRE(p.at({0, n, 1}) == 10 * (2 * r) + 2 * c + 1);
      REQUIRE(p.at({0, n, 2}) == 10 * (2 * r + 1) + 2 * c);
    }
  REQUIRE_THROWS_WITH(patchify(Tensor::zeros({1, 1, 4, 5}), 2), Contains("4x5 is not divisible"));
}

TEST_CASE("without a class token: no cls_token, one position per patch", "[nn][vit_backbone]") {
  Generator gen(0);
  VitBackbone backbone(wide_options(), gen);
  auto names = backbone.named_parameters();
  REQUIRE(names[0].first == "pos_embed");
  REQUIRE(names[1].first == "patch_embed.weight");
  REQUIRE_FALSE(backbone.cls_token.defined());
  REQUIRE(backbone.pos_embed.shape() == Shape{1, 6, 8});
  REQUIRE(backbone.options.tokens() == 6);
  REQUIRE(backbone.encode(Tensor::randn({3, 2, 8, 12}, gen)).shape() == Shape{3, 6, 8});

  VitBackboneOptions with_class = wide_options();
  with_class.class_token = true;
  VitBackbone classifier_body(with_class, gen);
  REQUIRE(classifier_body.named_parameters()[0].first == "cls_token");
  REQUIRE(classifier_body.pos_embed.shape() == Shape{1, 7, 8});
}

TEST_CASE("the feature map holds patch (r, c)'s normalised state at [:, :, r, c]",
          "[nn][vit_backbone]") {
  for (bool class_token : {false, true}) {
    INFO("class token " << class_token);
    Generator gen(1);
    VitBackboneOptions o = wide_options();
    o.class_token = class_token;
    VitBackbone backbone(o, gen);
    Tensor images = Tensor::randn({2, 2, 8, 12}, gen);
    Tensor map = backbone.feature_map(images);  // (2, 8, 2, 3)
    REQUIRE(map.shape() == Shape{2, 8, 2, 3});
    Tensor states = backbone.norm->forward(backbone.encode(images));  // (2, T, 8)
    const std::int64_t first = class_token ? 1 : 0;
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t r = 0; r < 2; ++r)
        for (std::int64_t c = 0; c < 3; ++c)
          for (std::int64_t d = 0; d < 8; ++d)
            REQUIRE(map.at({b, d, r, c}) == states.at({b, first + r * 3 + c, d}));
  }
}

TEST_CASE("the backbone's feature map passes gradcheck", "[nn][vit_backbone]") {
  Generator gen(2);
  VitBackboneOptions o = wide_options();
  o.depth = 1;
  VitBackbone backbone(o, gen);
  backbone.to(DType::Float64);
  require_gradcheck([&](const std::vector<Tensor>& in) { return backbone.feature_map(in[0]); },
                    with_params({leaf({2, 2, 8, 12}, 3)}, backbone));
}

TEST_CASE("backbone options that do not fit together fail naming the option",
          "[nn][vit_backbone]") {
  VitBackboneOptions o = wide_options();
  o.image_width = 10;
  REQUIRE_THROWS_WITH(o.validate("pose config"),
                      Contains("pose config: image width 10 is not divisible by patch 4"));
  o = wide_options();
  o.image_height = 6;
  REQUIRE_THROWS_WITH(o.validate(), Contains("image height 6 is not divisible by patch 4"));
  o = wide_options();
  o.heads = 3;
  REQUIRE_THROWS_WITH(o.validate(), Contains("dim 8 is not divisible by heads 3"));
  o = wide_options();
  o.patch = 0;
  REQUIRE_THROWS_WITH(o.validate(), Contains("patch must be positive, got 0"));
  Generator gen(0);
  VitBackbone backbone(wide_options(), gen);
  REQUIRE_THROWS_WITH(backbone.encode(Tensor::zeros({1, 2, 12, 8})),
                      Contains("VitBackbone: images (1, 2, 12, 8) should be (B, 2, 8, 12)"));
  // 8·12 image, patch 4: 6 patches of 32 values embedded into 8, and two blocks over 6 tokens.
  const std::int64_t block = 2 * 6 * 8 * 24 + 4 * 6 * 6 * 8 + 2 * 6 * 8 * 8 + 4 * 6 * 8 * 16;
  REQUIRE(wide_options().forward_flops() == 2 * 6 * 32 * 8 + 2 * block);
}
