#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/pose/vit_pose.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {
// The golden files' model (tests/golden/make_golden.py, gen_vit_pose): 8 × 12 images, patch 4
// (a 2 × 3 grid), heatmaps 8 × 12.
PoseConfig small_config(const std::string& decoder) {
  PoseConfig c;
  c.image_height = 8, c.image_width = 12, c.channels = 2, c.patch = 4, c.dim = 8, c.depth = 2;
  c.heads = 2, c.mlp_dim = 16, c.joints = 3, c.decoder = decoder, c.decoder_channels = 4;
  return c;
}
}  // namespace

TEST_CASE("ViTPose matches PyTorch with either decoder", "[nn][vit_pose][golden]") {
  for (const char* decoder : {"classic", "simple"}) {
    INFO(decoder);
    Generator gen(0);
    VitPose model(small_config(decoder), gen);
    model.train();  // BatchNorm on the batch's statistics, running statistics updated
    check_parity(std::string("vit_pose_") + decoder, model,
                 [&](auto& in) { return model.forward(in.at("images")); });
  }
}

TEST_CASE("ViTPose passes gradcheck with either decoder", "[nn][vit_pose]") {
  for (const char* decoder : {"classic", "simple"}) {
    INFO(decoder);
    Generator gen(1);
    PoseConfig c = small_config(decoder);
    c.depth = 1;
    VitPose model(c, gen);
    // mmpose's N(0, 0.001) convolution weights make gradcheck's step of 1e-6 a 0.1 % change of a
    // weight, which after BatchNorm's division by the small spread moves ReLU inputs across 0:
    // the finite differences would straddle kinks. Weights of PyTorch's scale keep them smooth.
    for (auto& [name, p] : model.keypoint_head->named_parameters())
      if (p.dim() == 4) p.copy_from(Tensor::randn(p.shape(), gen, DType::Float32, 0.0, 0.3));
    model.to(DType::Float64);
    require_gradcheck([&](const std::vector<Tensor>& in) { return model.forward(in[0]); },
                      with_params({leaf({2, 2, 8, 12}, 3)}, model));
  }
}

TEST_CASE("ViTPose: heatmaps at four times the token grid, mmpose's names", "[nn][vit_pose]") {
  Generator gen(0);
  PoseConfig c;  // 64 × 48, patch 8: an 8 × 6 grid, 32 × 24 heatmaps at stride 2
  c.depth = 1;
  for (const char* decoder : {"classic", "simple"}) {
    INFO(decoder);
    c.decoder = decoder;
    VitPose model(c, gen);
    REQUIRE(model.forward(Tensor::zeros({2, 1, 64, 48})).shape() == Shape{2, 15, 32, 24});
    REQUIRE(c.heatmap_stride() == 2.0f);
    auto names = model.named_parameters();
    REQUIRE(names[0].first == "backbone.pos_embed");  // no class token
    REQUIRE(names[1].first == "backbone.patch_embed.weight");
    REQUIRE(names.back().first == "keypoint_head.final_layer.bias");
    REQUIRE(model.backbone->pos_embed.shape() == Shape{1, 48, c.dim});
  }
  VitPose classic(small_config("classic"), gen);
  const StateDict state = classic.state_dict();
  REQUIRE(state.at("keypoint_head.deconv_layers.0.weight").shape() == Shape{8, 4, 4, 4});
  REQUIRE(state.at("keypoint_head.deconv_layers.1.running_var").shape() == Shape{4});
  REQUIRE(state.at("keypoint_head.deconv_layers.3.weight").shape() == Shape{4, 4, 4, 4});
  REQUIRE(state.at("keypoint_head.final_layer.weight").shape() == Shape{3, 4, 1, 1});
  REQUIRE_FALSE(state.count("keypoint_head.deconv_layers.0.bias"));
  VitPose simple(small_config("simple"), gen);
  REQUIRE(simple.state_dict().at("keypoint_head.final_layer.weight").shape() == Shape{3, 8, 3, 3});
  // mmpose's init: the last convolution starts near 0 (N(0, 0.001)) with bias 0.
  for (double v : simple.keypoint_head->parameters()[1].to_vector()) REQUIRE(v == 0.0);
  for (double v : simple.keypoint_head->parameters()[0].to_vector()) REQUIRE(std::abs(v) < 0.01);
}

TEST_CASE("ViTPose keeps each block's attention over the patch tokens", "[nn][vit_pose]") {
  Generator gen(2);
  VitPose model(small_config("simple"), gen);
  model.keep_attention(true);
  model.forward(Tensor::randn({3, 2, 8, 12}, gen));
  const std::vector<Tensor> maps = model.attention_maps();
  REQUIRE(maps.size() == 2);
  REQUIRE(maps[0].shape() == Shape{3, 2, 6, 6});  // (B, h, N, N), no class token
  for (std::int64_t n = 0; n < 6; ++n) {
    double row = 0;
    for (std::int64_t m = 0; m < 6; ++m) row += maps[1].at({1, 0, n, m});
    REQUIRE(row == Approx(1.0).epsilon(1e-5));
  }
}

TEST_CASE("ViTPose in eval mode normalises with the running statistics", "[nn][vit_pose]") {
  Generator gen(3);
  VitPose model(small_config("classic"), gen);
  const Tensor images = Tensor::randn({2, 2, 8, 12}, gen);
  model.eval();
  // One image alone gives the same heatmaps as in a batch: nothing depends on the batch.
  const Tensor both = model.forward(images);
  const Tensor first = model.forward(slice(images, 0, 0, 1));
  REQUIRE(max_abs_diff(slice(both, 0, 0, 1), first) < 1e-6);
  model.train();
  REQUIRE(max_abs_diff(slice(model.forward(images), 0, 0, 1), first) > 1e-4);
}

TEST_CASE("pose configurations: JSON, FLOPs and errors naming the field", "[nn][vit_pose]") {
  PoseConfig c;
  REQUIRE(PoseConfig::from_json(c.to_json()).to_json() == c.to_json());
  REQUIRE(c.grid_height() == 8);
  REQUIRE(c.grid_width() == 6);
  REQUIRE(c.heatmap_height() == 32);
  REQUIRE(c.heatmap_width() == 24);
  // The simple decoder's one 3×3 convolution on the 32 × 24 maps: 2·768·K·D·9.
  PoseConfig simple = c;
  simple.decoder = "simple";
  REQUIRE(simple.forward_flops() - c.backbone().forward_flops() == 2 * 768 * 15 * c.dim * 9);
  REQUIRE(c.forward_flops() > simple.forward_flops());

  PoseConfig bad = c;
  bad.decoder = "fancy";
  REQUIRE_THROWS_WITH(bad.validate(), Contains("unknown decoder 'fancy'") &&
                                          Contains("classic, simple"));
  bad = c;
  bad.patch = 5;
  REQUIRE_THROWS_WITH(bad.validate(),
                      Contains("pose config: image height 64 is not divisible by patch 5"));
  bad = c;
  bad.image_width = 44;
  REQUIRE_THROWS_WITH(bad.validate(), Contains("image width 44 is not divisible by patch 8"));
  bad = c;
  bad.heads = 5;
  REQUIRE_THROWS_WITH(bad.validate(), Contains("dim 96 is not divisible by heads 5"));
  bad = c;
  bad.depth = 1000000;
  REQUIRE_THROWS_WITH(bad.validate(), Contains("depth 1000000 is above the limit of 1000"));
  bad = c;
  bad.decoder_channels = 0;
  REQUIRE_THROWS_WITH(bad.validate(), Contains("decoder channels must be positive"));
  REQUIRE_THROWS_WITH(PoseConfig::from_json(R"({"image_height": 64})"),
                      Contains("the field \"image_width\" is missing"));
  Generator gen(0);
  VitPose model(c, gen);
  REQUIRE_THROWS_WITH(model.forward(Tensor::zeros({1, 1, 48, 64})),
                      Contains("ViTPose: images (1, 1, 48, 64) should be (B, 1, 64, 48)"));
  REQUIRE_THROWS_WITH(model.forward_batch({}), Contains("ViTPose::forward_batch takes 1 input"));
}
