#include "nn/vit_backbone.h"

#include "core/elementwise.h"
#include "core/shape_ops.h"
#include "nn/init.h"
#include "nn/conv/max_pool2d.h"

namespace uwaga::nn {

std::int64_t VitBackboneOptions::stem_layers() const {
  if (stem == Stem::patch) return 0;
  std::int64_t n = 0;
  while ((std::int64_t{1} << n) < patch) ++n;  // log2 P, P a power of 2 (validate)
  return n;
}

std::int64_t VitBackboneOptions::stem_width(std::int64_t i) const {
  if (stem == Stem::cct) return i == stem_layers() ? dim : dim / 2;
  return dim >> (stem_layers() + 1 - i);
}

std::int64_t VitBackboneOptions::embed_in() const {
  if (stem == Stem::patch) return patch_dim();
  return stem_layers() > 0 ? stem_width(stem_layers()) : channels;
}

std::int64_t VitBackboneOptions::forward_flops() const {
  const std::int64_t T = tokens(), D = dim;
  std::int64_t stem_flops = 0;  // Conv_i: 9 taps × in × out channels at each output position
  for (std::int64_t i = 1; i <= stem_layers(); ++i) {
    const std::int64_t in = i == 1 ? channels : stem_width(i - 1);
    const std::int64_t at = stem == Stem::cct ? i - 1 : i;  // CCT pools after the convolution
    const std::int64_t positions = (image_height >> at) * (image_width >> at);
    stem_flops += 2 * positions * 9 * in * stem_width(i);
  }
  const std::int64_t per_block = 2 * T * D * 3 * D  // qkv projection
                                 + 2 * 2 * T * T * D  // Q Kᵀ and A V over all heads
                                 + 2 * T * D * D      // output projection W_O
                                 + 2 * 2 * T * D * mlp_dim;  // fc1 and fc2
  const std::int64_t embed_flops = cct_details ? 0 : 2 * num_patches() * embed_in() * D;
  return stem_flops + embed_flops + depth * per_block;
}

void VitBackboneOptions::validate(const char* what) const {
  for (auto [name, v] : {std::pair{"image height", image_height}, {"image width", image_width},
                         {"channels", channels}, {"patch", patch}, {"dim", dim},
                         {"depth", depth}, {"heads", heads}, {"mlp-dim", mlp_dim}})
    if (v < 1) fail(what, ": ", name, " must be positive, got ", v);
  if (image_height % patch != 0)
    fail(what, ": image height ", image_height, " is not divisible by patch ", patch);
  if (image_width % patch != 0)
    fail(what, ": image width ", image_width, " is not divisible by patch ", patch);
  if (dim % heads != 0) fail(what, ": dim ", dim, " is not divisible by heads ", heads);
  if (!(drop_path >= 0 && drop_path < 1))
    fail(what, ": drop path must be in [0, 1), got ", drop_path);
  if (!(dropout >= 0 && dropout < 1)) fail(what, ": dropout must be in [0, 1), got ", dropout);
  if (!(attention_dropout >= 0 && attention_dropout < 1))
    fail(what, ": attention dropout must be in [0, 1), got ", attention_dropout);
  const char* stem_name = stem == Stem::cct ? "a cct stem" : "a conv stem";
  if (stem != Stem::patch && (patch & (patch - 1)) != 0)
    fail(what, ": ", stem_name, " halves the image log2 P times, so patch ", patch,
         " must be a power of 2");
  if (stem == Stem::conv && dim % patch != 0)
    fail(what, ": a conv stem's widths double up to D/2 from D/P, so dim ", dim,
         " must be divisible by patch ", patch);
  if (cct_details && (stem != Stem::cct || stem_layers() < 1))
    fail(what, ": cct details need the cct stem with at least one convolution (patch >= 2), got ",
         stem == Stem::cct ? "patch 1" : "another stem");
  if (stem == Stem::cct && stem_layers() > 1 && dim % 2 != 0)
    fail(what, ": a cct stem's hidden convolutions have D/2 channels, so dim ", dim,
         " must be even");
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

VitBackbone::VitBackbone(const VitBackboneOptions& o, Generator& gen) : options(o) {
  options.validate();
  // The conv stem's convolutions halve the image themselves; CCT's keep its size, without a bias
  // (their max pooling halves it).
  const Conv2dOptions conv = o.stem == Stem::cct ? Conv2dOptions{.stride = 1, .padding = 1, .bias = false}
                                                 : Conv2dOptions{.stride = 2, .padding = 1};
  for (std::int64_t i = 1; i <= o.stem_layers(); ++i)
    stem.push_back(register_module(
        "stem." + std::to_string(i - 1),
        std::make_shared<Conv2d>(i == 1 ? o.channels : o.stem_width(i - 1), o.stem_width(i), 3,
                                 conv, gen)));
  if (o.cct_details) {
    // CCT's Tokenizer.init_weight: Kaiming normal over PyTorch's default, for the ReLUs.
    for (auto& conv : stem) {
      const std::int64_t fan_in = conv->weight.size(1) * 3 * 3;  // C_in · kh · kw
      init::kaiming_normal(conv->weight, gen, fan_in);
    }
  } else {
    patch_embed = register_module(
        "patch_embed",
        std::make_shared<Linear>(LinearOptions{.in = o.embed_in(), .out = o.dim}, gen));
  }
  const Init trunc_normal = [&](Tensor& w) { init::trunc_normal(w, gen, 0.02); };
  if (o.class_token) cls_token = register_parameter("cls_token", {1, 1, o.dim}, trunc_normal);
  // CCT draws its learnable positions from trunc_normal_(std=0.2), ten times ViT's std, whose cut
  // at ±2 (absolute) is ±10σ: a plain normal.
  const Init position_init = [&](Tensor& w) {
    if (o.cct_details) init::normal(w, gen, 0.2);
    else init::trunc_normal(w, gen, 0.02);
  };
  pos_embed = register_parameter("pos_embed", {1, o.tokens(), o.dim}, position_init);
  // No parameters and no draw from `gen`, like the blocks' dropout and drop path.
  if (o.dropout > 0) dropout = register_module("dropout", std::make_shared<Dropout>(o.dropout));
  for (std::int64_t i = 0; i < o.depth; ++i) {
    const double rate = o.depth > 1 ? o.drop_path * static_cast<double>(i) / (o.depth - 1) : o.drop_path;
    blocks.push_back(register_module(
        "blocks." + std::to_string(i),
        std::make_shared<TransformerEncoderBlock>(
            TransformerEncoderBlockOptions{.dim = o.dim, .heads = o.heads, .mlp_dim = o.mlp_dim,
                                           .attention = o.attention,
                                           .drop_path = rate, .dropout = o.dropout,
                                           .attention_dropout = o.attention_dropout,
                                           .norm = o.cct_details ? BlockNorm::between
                                                                 : BlockNorm::pre,
                                           .qkv_bias = !o.cct_details},
            gen)));
  }
  norm = register_module("norm", std::make_shared<LayerNorm>(o.dim));
}

void VitBackbone::check_images(const Tensor& images, const char* model) const {
  if (images.dim() != 4 || images.size(1) != options.channels ||
      images.size(2) != options.image_height || images.size(3) != options.image_width)
    fail(model, ": images ", shape_str(images.shape()), " should be (B, ", options.channels, ", ",
         options.image_height, ", ", options.image_width, ")");
}

Tensor VitBackbone::embed_patches(const Tensor& images) {
  if (options.stem == Stem::patch) {
    Tensor patches = patchify(images, options.patch);  // x_p   (B, N, P²·C)
    return patch_embed->forward(patches);              // x_p E (B, N, D)
  }
  Tensor s = images;                                   // s_0 = x  (B, C, H, W)
  for (auto& conv : stem) {
    // CCT's layer is MaxPool(ReLU(conv(s))), computed as ReLU(MaxPool(conv(s))): the same values
    // (ReLU keeps order, so the window's largest stays largest) and the same gradients, with
    // the ReLU on the pooled quarter of the cells.
    s = conv->forward(s);
    if (options.stem == Stem::cct) s = max_pool2d(s, 3, 2, 1);  // halves H and W
    s = relu(s);
  }                                                    // s_n  (B, D/2 or D, H/P, W/P)
  const std::int64_t B = s.size(0), width = s.size(1);
  s = reshape(permute(s, {0, 2, 3, 1}), {B, options.num_patches(), width});  // cell (r, c) -> token
  if (options.cct_details) return s;                         // CCT: the cells are the tokens
  return patch_embed->forward(s);                            // the 1×1 convolution  (B, N, D)
}

Tensor VitBackbone::encode(const Tensor& images) {
  check_images(images, "VitBackbone");
  const std::int64_t B = images.size(0), D = options.dim;
  Tensor z = embed_patches(images);                  // x_p E    (B, N, D)
  if (options.class_token)
    z = cat({expand(cls_token, {B, 1, D}), z}, 1);   // [x_class; x_p E]  (B, N+1, D)
  z = z + pos_embed;                                 // z_0      (B, T, D)
  if (dropout) z = dropout->forward(z);              // training only
  for (auto& block : blocks) z = block->forward(z);  // z_ℓ, ℓ = 1…L
  return z;
}

Tensor VitBackbone::feature_map(const Tensor& images) {
  Tensor z = encode(images);  // (B, T, D)
  const std::int64_t B = z.size(0), T = z.size(1), D = options.dim;
  if (options.class_token) z = slice(z, 1, 1, T);  // the patch tokens (B, N, D)
  Tensor y = norm->forward(z);                     // LN(z_L)  (B, N, D), raster order
  y = reshape(y, {B, options.grid_height(), options.grid_width(), D});
  return permute(y, {0, 3, 1, 2});                 // (B, D, H/P, W/P)
}

void VitBackbone::keep_attention(bool on) {
  for (auto& block : blocks) block->attn->keep_attention(on);
}

std::vector<Tensor> VitBackbone::attention_maps() const {
  std::vector<Tensor> maps;
  for (auto& block : blocks) maps.push_back(block->attn->attention());
  return maps;
}

}  // namespace uwaga::nn
