#include "nn/vision_transformer.h"

#include "core/elementwise.h"
#include "core/json_fields.h"
#include "core/shape_ops.h"
#include "nn/init.h"

namespace uwaga::nn {

std::int64_t VitConfig::num_patches() const {
  if (patch < 1 || image_size < patch)
    fail("VitConfig: patch ", patch, " must be from 1 to image_size ", image_size);
  return (image_size / patch) * (image_size / patch);
}

std::int64_t VitConfig::forward_flops() const {
  const std::int64_t T = tokens(), D = dim;
  const std::int64_t per_block = 2 * T * D * 3 * D  // qkv projection
                                 + 2 * 2 * T * T * D  // Q Kᵀ and A V over all heads
                                 + 2 * T * D * D      // output projection W_O
                                 + 2 * 2 * T * D * mlp_dim;  // fc1 and fc2
  return 2 * num_patches() * patch_dim() * D + depth * per_block + 2 * D * num_classes;
}

void VitConfig::validate() const {
  // At least 1, and at most a generous bound, far above any model this code can train. Within
  // the bounds forward_flops() fits in int64.
  auto in_range = [](const char* name, std::int64_t v, std::int64_t limit) {
    check_size_in_range("vit config", name, v, limit);
  };
  in_range("image size", image_size, 65536);
  in_range("channels", channels, 1024);
  in_range("patch", patch, 65536);
  in_range("dim", dim, 65536);
  in_range("depth", depth, 1000);
  in_range("heads", heads, 65536);
  in_range("mlp-dim", mlp_dim, 65536);
  in_range("classes", num_classes, 1000000);
  if (image_size % patch != 0)
    fail("vit config: image size ", image_size, " is not divisible by patch ", patch);
  if (dim % heads != 0) fail("vit config: dim ", dim, " is not divisible by heads ", heads);
  if (num_patches() > 100000)
    fail("vit config: image size ", image_size, " with patch ", patch, " makes ", num_patches(),
         " patches, above the limit of 100000");
}

std::string VitConfig::to_json() const { return fields_to_json(*this).dump(); }

VitConfig VitConfig::from_json(const std::string& text) {
  VitConfig c;
  fields_from_json(parse_json_input(text, "vit config"), c, "vit config");
  c.validate();
  return c;
}

Tensor patchify(const Tensor& images, std::int64_t P) {
  if (images.dim() != 4)
    fail("patchify: images ", shape_str(images.shape()), " should be (B, C, H, W)");
  const std::int64_t B = images.size(0), C = images.size(1), H = images.size(2),
                     W = images.size(3);
  if (P < 1) fail("patchify: patch size must be positive, got ", P);
  if (H % P != 0 || W % P != 0)
    fail("patchify: image ", H, "x", W, " is not divisible into ", P, "x", P, " patches");
  // (B, C, H/P, P, W/P, P) -> (B, H/P, W/P, P, P, C) -> (B, N, P·P·C)
  Tensor x = reshape(images, {B, C, H / P, P, W / P, P});
  x = permute(x, {0, 2, 4, 3, 5, 1});
  return reshape(x, {B, (H / P) * (W / P), P * P * C});
}

VisionTransformer::VisionTransformer(const VitConfig& c, Generator& gen) : config(c) {
  config.validate();
  patch_embed = register_module(
      "patch_embed",
      std::make_shared<Linear>(LinearOptions{.in = c.patch_dim(), .out = c.dim}, gen));
  cls_token = register_parameter("cls_token", Tensor::empty({1, 1, c.dim}));
  pos_embed = register_parameter("pos_embed", Tensor::empty({1, c.tokens(), c.dim}));
  init::trunc_normal(cls_token, gen, 0.02);
  init::trunc_normal(pos_embed, gen, 0.02);
  for (std::int64_t i = 0; i < c.depth; ++i)
    blocks.push_back(register_module(
        "blocks." + std::to_string(i),
        std::make_shared<TransformerEncoderBlock>(
            TransformerEncoderBlockOptions{.dim = c.dim, .heads = c.heads, .mlp_dim = c.mlp_dim},
            gen)));
  norm = register_module("norm", std::make_shared<LayerNorm>(c.dim));
  head = register_module(
      "head", std::make_shared<Linear>(LinearOptions{.in = c.dim, .out = c.num_classes}, gen));
}

Tensor VisionTransformer::forward_batch(const std::vector<Tensor>& inputs) {
  expect_inputs(inputs, 1, "VisionTransformer", "images (B, C, H, W)");
  return forward(inputs[0]);
}

std::shared_ptr<Model> VisionTransformer::replica() const {
  Generator unused(0);  // a replica's initial values are replaced by the model's
  return in_my_dtype(std::make_shared<VisionTransformer>(config, unused));
}

Tensor VisionTransformer::forward(const Tensor& images) {
  if (images.dim() != 4 || images.size(1) != config.channels ||
      images.size(2) != config.image_size || images.size(3) != config.image_size)
    fail("VisionTransformer: images ", shape_str(images.shape()), " should be (B, ",
         config.channels, ", ", config.image_size, ", ", config.image_size, ")");
  const std::int64_t B = images.size(0);
  Tensor patches = patchify(images, config.patch);          // x_p      (B, N, P²·C)
  Tensor embedded = patch_embed->forward(patches);          // x_p E    (B, N, D)
  Tensor cls = expand(cls_token, {B, 1, config.dim});       // x_class  (B, 1, D)
  Tensor z = cat({cls, embedded}, 1) + pos_embed;           // z_0      (B, N+1, D)
  for (auto& block : blocks) z = block->forward(z);         // z_ℓ, ℓ = 1…L
  Tensor y = norm->forward(reshape(slice(z, 1, 0, 1), {B, config.dim}));  // y = LN(z_L^0)
  return head->forward(y);                                  // (B, classes)
}

void VisionTransformer::keep_attention(bool on) {
  for (auto& block : blocks) block->attn->keep_attention(on);
}

std::vector<Tensor> VisionTransformer::attention_maps() const {
  std::vector<Tensor> maps;
  for (auto& block : blocks) maps.push_back(block->attn->attention());
  return maps;
}

}  // namespace uwaga::nn
