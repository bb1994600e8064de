#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/uwaga.h"
#include "nn/attention_rollout.h"
#include "nn/vision_transformer.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {
VitConfig small_config() {
  VitConfig c;
  c.image_size = 8, c.channels = 2, c.patch = 4, c.dim = 8, c.depth = 2, c.heads = 2;
  c.mlp_dim = 16, c.num_classes = 5;
  return c;
}

// One block of config c, in float64, passes gradcheck in its images and parameters.
void require_vit_gradcheck(VitConfig c, std::uint64_t seed) {
  Generator gen(seed);
  c.depth = 1;
  VisionTransformer vit(c, gen);
  vit.to(DType::Float64);
  require_gradcheck([&](const std::vector<Tensor>& in) { return vit.forward(in[0]); },
                    with_params({leaf({2, 2, 8, 8}, seed + 2)}, vit));
}
}  // namespace

TEST_CASE("patchify cuts P×P patches in raster order, (P, P, C) within a patch", "[nn][vit]") {
  // Image (1, 2, 4, 4): value = 100·c + 10·row + column.
  Tensor img = Tensor::empty({1, 2, 4, 4});
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) img.set({0, c, i, j}, 100 * c + 10 * i + j);
  Tensor p = patchify(img, 2);
  REQUIRE(p.shape() == Shape{1, 4, 8});
  // Patch 1 is the top-right 2×2 block: pixels (0,2), (0,3), (1,2), (1,3), channels innermost.
  std::vector<double> expected = {2, 102, 3, 103, 12, 112, 13, 113};
  for (int k = 0; k < 8; ++k) REQUIRE(p.at({0, 1, k}) == expected[k]);
  REQUIRE(p.at({0, 2, 0}) == 20);  // patch 2 starts at row 2, column 0
  REQUIRE_THROWS_WITH(patchify(Tensor::zeros({1, 1, 5, 5}), 2), Contains("not divisible"));
}

TEST_CASE("the ViT matches PyTorch", "[nn][vit][golden]") {
  Generator gen(0);
  VisionTransformer vit(small_config(), gen);
  check_parity("vit", vit, [&](auto& in) { return vit.forward(in.at("images")); });
}

TEST_CASE("the ViT passes gradcheck", "[nn][vit]") {
  require_vit_gradcheck(small_config(), 1);
}

TEST_CASE("ViT names, FLOPs and configuration errors", "[nn][vit]") {
  Generator gen(0);
  VitConfig tiny;  // defaults: the mnist-tiny reference configuration
  VisionTransformer vit(tiny, gen);
  auto names = vit.named_parameters();
  // Own parameters first, then submodules in registration order (as PyTorch lists them).
  REQUIRE(names[0].first == "cls_token");
  REQUIRE(names[1].first == "pos_embed");
  REQUIRE(names[2].first == "patch_embed.weight");
  REQUIRE(names[4].first == "blocks.0.norm1.weight");
  REQUIRE(names.back().first == "head.bias");
  REQUIRE(tiny.tokens() == 17);
  // ≈ 7.2 MFLOP forward, ≈ 22 MFLOP per training image (forward + backward ≈ 3× forward).
  REQUIRE(tiny.forward_flops() > 7.0e6);
  REQUIRE(tiny.forward_flops() < 7.5e6);
  VitConfig bad = tiny;
  bad.heads = 5;
  REQUIRE_THROWS_WITH(bad.validate(), Contains("dim 64 is not divisible by heads 5"));
  bad = tiny;
  bad.patch = 5;
  REQUIRE_THROWS_WITH(bad.validate(), Contains("image size 28 is not divisible by patch 5"));
  REQUIRE(VitConfig::from_json(tiny.to_json()).to_json() == tiny.to_json());
  REQUIRE_THROWS_WITH(vit.forward(Tensor::zeros({1, 3, 28, 28})), Contains("should be (B, 1, 28, 28)"));
}

TEST_CASE("attention maps: class-token rows and rollout", "[nn][vit]") {
  Generator gen(2);
  VisionTransformer vit(small_config(), gen);
  vit.keep_attention(true);
  vit.forward(Tensor::randn({3, 2, 8, 8}, gen));
  auto maps = vit.attention_maps();
  REQUIRE(maps.size() == 2);
  REQUIRE(maps[0].shape() == Shape{3, 2, 5, 5});
  Tensor cls = class_token_attention(maps[0]);
  REQUIRE(cls.shape() == Shape{3, 4});
  Tensor R = attention_rollout(maps);
  REQUIRE(R.shape() == Shape{3, 5, 5});
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t i = 0; i < 5; ++i) {
      double row = 0;
      for (std::int64_t j = 0; j < 5; ++j) row += R.at({b, i, j});
      REQUIRE(row == Approx(1.0).epsilon(1e-5));  // a product of row-stochastic matrices
    }
  // With uniform attention in every layer the rollout is uniform too.
  Tensor uniform = Tensor::full({1, 2, 4, 4}, 0.25);
  Tensor Ru = attention_rollout({uniform, uniform});
  REQUIRE(Ru.at({0, 0, 1}) == Approx(Ru.at({0, 0, 2})));
}

TEST_CASE("patchify with a patch size below 1 is an error, not a division by zero",
          "[nn][vit]") {
  REQUIRE_THROWS_WITH(patchify(Tensor::zeros({1, 1, 4, 4}), 0),
                      Contains("patchify") && Contains("patch size must be positive, got 0"));
  REQUIRE_THROWS_WITH(patchify(Tensor::zeros({1, 1, 4, 4}), -2), Contains("got -2"));
  VitConfig c;
  for (std::int64_t patch : {0, -3, 29}) {
    c.patch = patch;
    REQUIRE_THROWS_WITH(c.num_patches(), Contains("must be from 1 to image_size 28"));
    REQUIRE_THROWS_WITH(c.tokens(), Contains("VitConfig: patch"));
    REQUIRE_THROWS_WITH(c.forward_flops(), Contains("VitConfig: patch"));
  }
}

TEST_CASE("ViT configurations beyond generous bounds fail naming the field and the limit",
          "[nn][vit]") {
  // A flag or checkpoint with depth 10¹² would otherwise loop building 10¹² blocks.
  const std::int64_t huge = 1000000000000;
  struct Case { std::int64_t VitConfig::*member; const char* field; const char* limit; };
  for (const Case& c : std::vector<Case>{{&VitConfig::depth, "depth", "1000"},
                                         {&VitConfig::dim, "dim", "65536"},
                                         {&VitConfig::mlp_dim, "mlp-dim", "65536"},
                                         {&VitConfig::image_size, "image size", "65536"},
                                         {&VitConfig::channels, "channels", "1024"},
                                         {&VitConfig::num_classes, "classes", "1000000"}}) {
    const std::string message =
        std::string(c.field) + " 1000000000000 is above the limit of " + c.limit;
    INFO(message);
    VitConfig bad;
    bad.*c.member = huge;
    REQUIRE_THROWS_WITH(bad.validate(), Contains(message));
  }
  VitConfig many;  // 65536 / 1 patches per side: 2³² patches
  many.image_size = 65536;
  many.patch = 1;
  REQUIRE_THROWS_WITH(many.validate(), Contains("above the limit of 100000"));
  VitConfig edge;  // the limits themselves are allowed
  edge.depth = 1000;
  edge.dim = 65536;
  edge.mlp_dim = 65536;
  REQUIRE_NOTHROW(edge.validate());
  VitConfig from_flag;
  from_flag.depth = huge;
  REQUIRE_THROWS_WITH(VitConfig::from_json(from_flag.to_json()), Contains("depth"));
}

namespace {
VitConfig conv_stem_config() {
  VitConfig c = small_config();  // 8 × 8 × 2 images, patch 4, dim 8: Conv 2->2, Conv 2->4, 4->8
  c.stem = "conv";
  return c;
}
}  // namespace

TEST_CASE("the ViT with a conv stem matches PyTorch", "[nn][vit][golden]") {
  Generator gen(0);
  VisionTransformer vit(conv_stem_config(), gen);
  check_parity("vit_conv_stem", vit, [&](auto& in) { return vit.forward(in.at("images")); });
}

TEST_CASE("the ViT with a conv stem passes gradcheck", "[nn][vit]") {
  require_vit_gradcheck(conv_stem_config(), 2);
}

TEST_CASE("conv stem: names, widths, FLOPs, configuration and errors", "[nn][vit]") {
  VitConfig c;  // cifar10-vit's shape: 32 × 32 × 3, patch 4, dim 128, depth 6, 4 heads, MLP 256
  c.image_size = 32, c.channels = 3, c.patch = 4, c.dim = 128, c.mlp_dim = 256;
  VitConfig patches = c;
  c.stem = "conv";
  Generator gen(0);
  VisionTransformer vit(c, gen);
  auto names = vit.named_parameters();
  REQUIRE(names[2].first == "stem.0.weight");
  REQUIRE(names[4].first == "stem.1.weight");
  REQUIRE(names[6].first == "patch_embed.weight");
  REQUIRE(vit.backbone->stem.size() == 2);  // log2 4 convolutions: 32 -> 16 -> 8
  REQUIRE(vit.backbone->stem[0]->weight.shape() == Shape{32, 3, 3, 3});   // D/4
  REQUIRE(vit.backbone->stem[1]->weight.shape() == Shape{64, 32, 3, 3});  // D/2
  REQUIRE(vit.backbone->patch_embed->weight.shape() == Shape{128, 64});
  // The patch embedding's 48·128 + 128 parameters give way to the stem's
  // (3·9·32 + 32) + (32·9·64 + 64) + (64·128 + 128) = 27,712.
  Generator gen2(0);
  VisionTransformer plain(patches, gen2);
  REQUIRE(vit.num_parameters() == plain.num_parameters() - (48 * 128 + 128) + 27712);
  // FLOPs: the convolutions 2·(256·9·3·32 + 64·9·32·64) and 2·64·64·128 for the 1×1 one, against
  // 2·64·48·128 for the patch embedding.
  REQUIRE(c.forward_flops() - patches.forward_flops() ==
          2 * (256 * 9 * 3 * 32 + 64 * 9 * 32 * 64) + 2 * 64 * 64 * 128 - 2 * 64 * 48 * 128);
  REQUIRE(vit.forward(Tensor::zeros({2, 3, 32, 32})).shape() == Shape{2, 10});
  // JSON: the stem round-trips, and configurations from before it read as patches.
  REQUIRE(VitConfig::from_json(c.to_json()).stem == "conv");
  nlohmann::json old = nlohmann::json::parse(patches.to_json());
  old.erase("stem");
  REQUIRE(VitConfig::from_json(old.dump()).stem == "patch");
  VitConfig bad = c;
  bad.stem = "pixels";
  REQUIRE_THROWS_WITH(bad.validate(), Contains("stem must be patch, conv or cct, got 'pixels'"));
  bad = c;
  bad.image_size = 28, bad.channels = 1, bad.patch = 7;
  REQUIRE_THROWS_WITH(bad.validate(), Contains("patch 7 must be a power of 2"));
  bad = c;
  bad.patch = 8, bad.dim = 36, bad.heads = 4;
  REQUIRE_THROWS_WITH(bad.validate(), Contains("dim 36 must be divisible by patch 8"));
}

TEST_CASE("a conv stem on 1×1 patches is the patch embedding: no convolution, a Linear per pixel",
          "[nn][vit]") {
  VitConfig c = small_config();
  c.patch = 1;
  VitConfig s = c;
  s.stem = "conv";
  Generator g1(3), g2(3);
  VisionTransformer plain(c, g1), stem(s, g2);
  REQUIRE(stem.backbone->stem.empty());
  REQUIRE(stem.backbone->patch_embed->weight.shape() == Shape{8, 2});
  Generator data(4);
  Tensor x = Tensor::randn({2, 2, 8, 8}, data);
  REQUIRE(max_abs_diff(stem.forward(x), plain.forward(x)) == 0.0);
}

namespace {
VitConfig cct_seq_pool_config() {
  VitConfig c = small_config();  // 8 × 8 × 2 images, patch 4, dim 8: Conv 2->4, Conv 4->8, 8->8
  c.stem = "cct", c.pool = "seq";
  return c;
}
}  // namespace

TEST_CASE("the ViT with sequence pooling matches PyTorch, with patches and with the CCT stem",
          "[nn][vit][golden]") {
  VitConfig seq = small_config();
  seq.pool = "seq";
  Generator g1(0), g2(0);
  VisionTransformer patches(seq, g1), cct(cct_seq_pool_config(), g2);
  check_parity("vit_seq_pool", patches, [&](auto& in) { return patches.forward(in.at("images")); });
  check_parity("vit_cct_seq_pool", cct, [&](auto& in) { return cct.forward(in.at("images")); });
}

TEST_CASE("the ViT with the CCT stem and sequence pooling passes gradcheck", "[nn][vit]") {
  require_vit_gradcheck(cct_seq_pool_config(), 3);
  VitConfig cls = cct_seq_pool_config();
  cls.pool = "cls";
  require_vit_gradcheck(cls, 4);
}

TEST_CASE("sequence pooling is a softmax-weighted mean of the normalised tokens", "[nn][vit]") {
  VitConfig c = small_config();
  c.pool = "seq";
  Generator gen(5);
  VisionTransformer vit(c, gen);
  vit.to(DType::Float64);
  REQUIRE(c.tokens() == 4);  // (8/4)² patches, no class token
  REQUIRE(!vit.backbone->cls_token.defined());
  REQUIRE(vit.backbone->pos_embed.shape() == Shape{1, 4, 8});
  auto names = vit.named_parameters();
  REQUIRE(names[0].first == "pos_embed");
  REQUIRE(names[names.size() - 4].first == "attention_pool.weight");
  REQUIRE(names.back().first == "head.bias");
  // With w_pool = 0 every token weighs 1/T: the head reads the mean of LN(z_L).
  vit.attention_pool->weight.fill_(0.0);
  Generator data(6);
  Tensor x = Tensor::randn({3, 2, 8, 8}, data, DType::Float64);
  Tensor y = vit.backbone->norm->forward(vit.backbone->encode(x));  // (3, 4, 8)
  Tensor expected = vit.head->forward(mean(y, {1}));
  REQUIRE(max_abs_diff(vit.forward(x), expected) < 1e-12);
}

TEST_CASE("cct stem and seq pool: names, widths, FLOPs, configuration and errors", "[nn][vit]") {
  VitConfig c;  // cifar10-vit's data: 32 × 32 × 3, patch 4, dim 128, 4 blocks of 2 heads, MLP 128
  c.image_size = 32, c.channels = 3, c.patch = 4, c.dim = 128, c.depth = 4, c.heads = 2;
  c.mlp_dim = 128;
  VitConfig patches = c;
  c.stem = "cct", c.pool = "seq";
  Generator gen(0);
  VisionTransformer vit(c, gen);
  auto names = vit.named_parameters();
  REQUIRE(names[0].first == "pos_embed");
  REQUIRE(names[1].first == "stem.0.weight");  // no bias
  REQUIRE(names[2].first == "stem.1.weight");
  REQUIRE(names[3].first == "patch_embed.weight");
  REQUIRE(vit.backbone->stem[0]->weight.shape() == Shape{64, 3, 3, 3});     // D/2
  REQUIRE(vit.backbone->stem[1]->weight.shape() == Shape{128, 64, 3, 3});   // D
  REQUIRE(!vit.backbone->stem[0]->bias.defined());
  REQUIRE(vit.backbone->patch_embed->weight.shape() == Shape{128, 128});
  // Against patches: the patch embedding's 48·128 + 128 and the class token's 128 and its
  // position's 128 give way to the convolutions' 3·9·64 + 64·9·128, the Linear's 128·128 + 128
  // and attention_pool's 128 + 1.
  Generator gen2(0);
  VisionTransformer plain(patches, gen2);
  REQUIRE(vit.num_parameters() == plain.num_parameters() - (48 * 128 + 128) - 2 * 128 +
                                      (3 * 9 * 64 + 64 * 9 * 128) + (128 * 128 + 128) + 129);
  // FLOPs: the convolutions at full and half resolution (they pool after), the Linear, and the
  // pooling's scores; the blocks see 64 tokens instead of 65.
  VitConfig seq_patches = patches;
  seq_patches.pool = "seq";
  REQUIRE(c.forward_flops() - seq_patches.forward_flops() ==
          2 * (1024 * 9 * 3 * 64 + 256 * 9 * 64 * 128) + 2 * 64 * 128 * 128 - 2 * 64 * 48 * 128);
  REQUIRE(seq_patches.forward_flops() - patches.forward_flops() < 0);  // a token fewer
  REQUIRE(vit.forward(Tensor::zeros({2, 3, 32, 32})).shape() == Shape{2, 10});
  // JSON: stem and pool round-trip; configurations from before the pool read the class token.
  VitConfig back = VitConfig::from_json(c.to_json());
  REQUIRE(back.stem == "cct");
  REQUIRE(back.pool == "seq");
  nlohmann::json old = nlohmann::json::parse(patches.to_json());
  old.erase("pool");
  REQUIRE(VitConfig::from_json(old.dump()).pool == "cls");
  VitConfig bad = c;
  bad.pool = "mean";
  REQUIRE_THROWS_WITH(bad.validate(), Contains("pool must be cls or seq, got 'mean'"));
  bad = c;
  bad.image_size = 24, bad.patch = 3;
  REQUIRE_THROWS_WITH(bad.validate(), Contains("a cct stem halves the image log2 P times, so "
                                               "patch 3 must be a power of 2"));
  bad = c;
  bad.dim = 127, bad.heads = 1;
  REQUIRE_THROWS_WITH(bad.validate(), Contains("dim 127 must be even"));
}

namespace {
// CCT's own model (cct_details) on small_config's images: Conv 2->4, Conv 4->8, and the 4 grid
// cells × 8 channels are the tokens.
VitConfig cct_details_config() {
  VitConfig c = cct_seq_pool_config();
  c.cct_details = true;
  return c;
}
}  // namespace

TEST_CASE("the ViT with cct_details matches CCT's PyTorch code", "[nn][vit][golden]") {
  Generator gen(0);
  VisionTransformer cct(cct_details_config(), gen);
  // make_golden.py's define_cct: their names, mapped to these.
  check_parity("vit_cct_details", cct, [&](auto& in) { return cct.forward(in.at("images")); });
}

TEST_CASE("the ViT with cct_details passes gradcheck", "[nn][vit]") {
  require_vit_gradcheck(cct_details_config(), 5);
}

TEST_CASE("cct_details: CCT-4/3x2's 482,123 parameters, names, init, FLOPs and errors",
          "[nn][vit]") {
  VitConfig c;  // CCT-4/3x2 on CIFAR-10: 32 × 32 × 3, patch 4, dim 128, 4 blocks of 2 heads
  c.image_size = 32, c.channels = 3, c.patch = 4, c.dim = 128, c.depth = 4, c.heads = 2;
  c.mlp_dim = 128, c.stem = "cct", c.pool = "seq";
  VitConfig uwaga_model = c;
  c.cct_details = true;
  Generator gen(0), gen2(0);
  VisionTransformer cct(c, gen), plain(uwaga_model, gen2);
  // No Linear D -> D after the tokenizer (128·128 + 128) and no qkv biases (4 blocks × 3·128).
  REQUIRE(cct.num_parameters() == 482123);  // src/cct.py's cct_4_3x2_32
  REQUIRE(plain.num_parameters() - cct.num_parameters() == (128 * 128 + 128) + 4 * 3 * 128);
  REQUIRE(!cct.backbone->patch_embed);
  auto names = cct.named_parameters();
  REQUIRE(names[0].first == "pos_embed");
  REQUIRE(names[1].first == "stem.0.weight");
  REQUIRE(names[2].first == "stem.1.weight");
  REQUIRE(names[3].first == "blocks.0.norm1.weight");  // the names of uwaga's model, less two
  for (const auto& [name, p] : names) REQUIRE(name.find("qkv.bias") == std::string::npos);
  REQUIRE(cct.backbone->blocks[0]->options.norm == BlockNorm::between);
  REQUIRE(plain.backbone->blocks[0]->options.norm == BlockNorm::pre);
  // CCT's init: positions trunc-normal(0, 0.2), the convolutions N(0, 2 / fan_in).
  auto rms = [](const Tensor& t) { return std::sqrt(mean(t * t).item()); };
  REQUIRE(rms(cct.backbone->pos_embed) == Approx(0.2).epsilon(0.05));  // as PyTorch's: no cut
  REQUIRE(rms(cct.backbone->blocks[0]->mlp->fc1->weight) == Approx(0.02).epsilon(0.05));
  REQUIRE(rms(plain.backbone->pos_embed) == Approx(0.02 * 0.88).epsilon(0.05));
  REQUIRE(rms(cct.backbone->stem[0]->weight) == Approx(std::sqrt(2.0 / 27)).epsilon(0.15));
  REQUIRE(rms(cct.backbone->stem[1]->weight) == Approx(std::sqrt(2.0 / 576)).epsilon(0.02));
  // PyTorch's default, U(±1/√fan_in), has rms 1/√(3·fan_in): √6 = 2.45× smaller.
  REQUIRE(rms(plain.backbone->stem[1]->weight) == Approx(1 / std::sqrt(3.0 * 576)).epsilon(0.02));
  // FLOPs: the Linear's 2·64·128·128 fewer.
  REQUIRE(uwaga_model.forward_flops() - c.forward_flops() == 2 * 64 * 128 * 128);
  REQUIRE(cct.forward(Tensor::zeros({2, 3, 32, 32})).shape() == Shape{2, 10});
  // JSON: round-trips; configurations from before cct_details are uwaga's model.
  REQUIRE(VitConfig::from_json(c.to_json()).cct_details);
  nlohmann::json old = nlohmann::json::parse(c.to_json());
  old.erase("cct_details");
  REQUIRE(!VitConfig::from_json(old.dump()).cct_details);
  // Only CCT's tokenizer and sequence pooling make CCT's model.
  VitConfig bad = c;
  bad.pool = "cls";
  REQUIRE_THROWS_WITH(bad.validate(),
                      Contains("cct_details needs stem cct and pool seq, got stem cct and pool cls"));
  bad = c;
  bad.stem = "conv";
  REQUIRE_THROWS_WITH(bad.validate(), Contains("cct_details needs stem cct and pool seq"));
  bad = c;
  bad.patch = 1, bad.image_size = 8;
  REQUIRE_THROWS_WITH(bad.validate(), Contains("cct details need the cct stem with at least one "
                                               "convolution (patch >= 2)"));
}
