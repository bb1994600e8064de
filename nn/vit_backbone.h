#pragma once
// The Vision Transformer's body (SEEDS §6), shared by the classifier (nn/vision_transformer.h)
// and the keypoint model (nn/pose/vit_pose.h). An image x ∈ R^{C×H×W}, H and W multiples of P (not
// necessarily equal), is cut into N = (H/P)·(W/P) patches x_p ∈ R^{N×(P²·C)} in raster order;
// each is embedded linearly with E ∈ R^{(P²·C)×D}; with a class token, a learnable x_class goes in
// front; learnable position embeddings are added:
//   z_0 = [x_class; x_p^1 E; …; x_p^N E] + E_pos      E_pos (N+1, D)   with the class token
//   z_0 = [x_p^1 E; …; x_p^N E] + E_pos               E_pos (N, D)     without
// then L pre-LN encoder blocks (SEEDS §5) give z_L, and the final LayerNorm LN is the caller's to
// apply: the classifier normalises only the class token's state, the keypoint model every patch
// token's, laid out as the (H/P) × (W/P) grid it came from (feature_map).
//
// With the conv stem the patches are not cut and embedded by one Linear: a convolutional stem takes
// the patch embedding's place (Xiao et al. 2021, "Early convolutions help transformers see
// better"; the tokenizers of CCT are of the same kind). n = log2 P convolutions, 3×3 with stride 2
// and padding 1, each followed by ReLU, halve the image n times down to the (H/P) × (W/P) grid,
// their widths doubling up to D/2 (D/4 then D/2 for P = 4):
//   s_0 = x,   s_i = ReLU(Conv_i(s_{i−1})),   Conv_i: 3×3, stride 2, D/2^(n+1−i) channels
// and patch_embed, a Linear from D/2 to D (the stem's closing 1×1 convolution), embeds grid cell
// (r, c) of s_n as token n = r·W/P + c, the place patchify gives patch (r, c). A token then sees
// pixels beyond its own P×P cell through the overlapping kernels (7×7 of them for P = 4), where a
// patch embedding sees its cell alone. P must be a power of 2 and divide D.
//
// With the CCT stem (Hassani et al. 2021, "Escaping the big data paradigm with compact
// transformers": their convolutional tokenizer) each of the n = log2 P convolutions keeps the
// image's size (3×3, stride 1, padding 1, no bias) and a max pooling halves it:
//   s_i = MaxPool(ReLU(Conv_i(s_{i−1}))),   MaxPool 3×3, stride 2, padding 1 (nn/conv/max_pool2d.h)
// with widths D/2 for the hidden layers and D for the last (CCT's 64 and 128 at D = 128), then
// patch_embed, a Linear from D to D. A convolution at full resolution sees every pixel where the
// stride-2 stem above sees every other, for 16× the multiply-adds at the second layer; the
// tokens' cells overlap in the same way. P must be a power of 2, and D even when n > 1.
//
// With cct_details (and the CCT stem) the backbone is CCT's own model, as their code builds it
// (SHI-Labs/Compact-Transformers src/cct.py, src/utils/transformers.py):
//   - no patch_embed: the last convolution already has D channels, and its (H/P)·(W/P) grid
//     cells × D are the tokens, x_p E replaced by s_n's cell (r, c);
//   - the blocks' qkv projections have no bias (nn/multi_head_attention.h, qkv_bias), and their
//     second LayerNorm sits between the branches (nn/transformer_encoder_block.h, BlockNorm);
//   - CCT's init: the convolutions Kaiming normal, std = √2 / √fan_in (the ReLU gain √2,
//     fan_in = C_in·3·3), E_pos normal(0, 0.2), the Linear weights normal(0, 0.02)
//     (VisionTransformer redraws them), LayerNorm as below. (CCT calls PyTorch's trunc_normal_,
//     which cuts at ±2 absolute: ±10σ and ±100σ at these stds, no cut at all in practice; uwaga's
//     trunc_normal cuts at ±2σ, 12 % narrower in rms.) Drawn in the order below, each
//     convolution's PyTorch default first and then its Kaiming draw (CCT's init_weight overwrites
//     it too), so that a model without cct_details draws exactly as before.
//
// Parameter names follow timm: patch_embed (a Linear, weight (D, P²·C) = Eᵀ over patches
// flattened in (P, P, C) order, plus a bias b_E that the notes' z_0 leaves out; timm's is a Conv2d
// patch_embed.proj), cls_token, pos_embed, blocks.<i>.{norm1, attn.qkv, attn.proj, norm2, mlp.fc1,
// mlp.fc2}, norm; a stem's convolutions are stem.<i> (i = 0…n−1, with Conv2d's names and init,
// drawn first), its 1×1 convolution patch_embed. Init: Linear weights trunc-normal(0, 0.02),
// biases 0; cls_token and pos_embed trunc-normal(0, 0.02); LayerNorm γ = 1, β = 0 — drawn in
// that order from the generator.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/random.h"
#include "nn/conv/conv2d.h"
#include "nn/dropout.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/transformer_encoder_block.h"

namespace uwaga::nn {

// patch: a Linear on each P×P patch (SEEDS §6); conv: 3×3 stride-2 convolutions (Xiao et al.);
// cct: 3×3 convolutions each followed by a 3×3 stride-2 max pooling (CCT's tokenizer).
enum class Stem { patch, conv, cct };

struct VitBackboneOptions {
  std::int64_t image_height = 28;  // H
  std::int64_t image_width = 28;   // W
  std::int64_t channels = 1;       // C
  std::int64_t patch = 7;          // P; divides H and W
  std::int64_t dim = 64;           // D
  std::int64_t depth = 6;          // L
  std::int64_t heads = 4;          // h; divides D
  std::int64_t mlp_dim = 128;
  bool class_token = true;
  AttentionPath attention = AttentionPath::fast;  // nn/multi_head_attention.h
  // Stochastic depth: block i of L drops its branches with probability drop_path · i / (L − 1),
  // 0 for the first block up to drop_path for the last (timm's linear rule). 0: off.
  double drop_path = 0.0;
  // Dropout (training only): on z_0, and on each block's two branch outputs before their residual
  // sums (nn/transformer_encoder_block.h), as in the original ViT and s-chh's. 0: off.
  double dropout = 0.0;
  // Attention dropout (training only): each block's attention weights A, before they average the
  // values (nn/attention_dropout.h), as in CCT. 0: off.
  double attention_dropout = 0.0;
  // How the image becomes tokens (above): patches, the stride-2 conv stem, or CCT's tokenizer.
  Stem stem = Stem::patch;
  // CCT's own model (above): no patch_embed, no qkv bias, LN between the branches, CCT's init.
  // Needs the CCT stem with at least one convolution (P ≥ 2).
  bool cct_details = false;

  std::int64_t grid_height() const { return image_height / patch; }  // H/P
  std::int64_t grid_width() const { return image_width / patch; }    // W/P
  std::int64_t num_patches() const { return grid_height() * grid_width(); }  // N
  std::int64_t tokens() const { return num_patches() + (class_token ? 1 : 0); }  // T
  std::int64_t patch_dim() const { return patch * patch * channels; }  // P²·C
  // The stem's convolutions: n = log2 P with a conv or CCT stem, else 0.
  std::int64_t stem_layers() const;
  // Conv_i's output channels, i = 1…n: D/2^(n+1−i) for the conv stem (doubling up to D/2), D/2
  // then D for the last for the CCT stem.
  std::int64_t stem_width(std::int64_t i) const;
  // What patch_embed embeds per token: P²·C values of a patch, or the last convolution's
  // channels at a grid cell (C when P = 1 leaves the stem no convolution). With cct_details
  // there is no patch_embed: the cell's D channels are the token.
  std::int64_t embed_in() const;
  // Multiply-adds ×2 of one forward pass on one image: the patch embedding (with the stem's
  // convolutions) and the blocks' matrix products.
  std::int64_t forward_flops() const;
  // Throws an Error, starting with `what` ("pose config"), naming the option when a size is not
  // positive or the sizes do not fit together (P not dividing H or W, h not dividing D). The
  // models' configurations check their fields' upper bounds first.
  void validate(const char* what = "vit backbone") const;
};

// (B, C, H, W) -> (B, N, P²·C): patch n = (row r, column c) of the (H/P) × (W/P) grid in raster
// order (n = r·W/P + c), each flattened as (P, P, C) — pixel by pixel, channels innermost.
Tensor patchify(const Tensor& images, std::int64_t patch);

class VitBackbone : public Module {
 public:
  VitBackbone(const VitBackboneOptions& options, Generator& gen);

  // Fails, naming `model`, unless `images` is (B, C, H, W) with this backbone's C, H and W.
  void check_images(const Tensor& images, const char* model) const;
  // The N patch tokens before the class token and the positions: x_p E (B, N, D), from the
  // patches or through the stem.
  Tensor embed_patches(const Tensor& images);
  // z_L (B, T, D): the tokens' states after the last block, before the final norm. With the class
  // token, token 0 is its state and token 1 + n patch n's; without, token n is patch n's.
  Tensor encode(const Tensor& images);
  // LN(z_L) of the patch tokens as a feature map (B, D, H/P, W/P): the state of patch (r, c) at
  // [:, :, r, c].
  Tensor feature_map(const Tensor& images);

  // Keeps each block's attention weights (B, h, T, T) from the next forward on.
  void keep_attention(bool on);
  std::vector<Tensor> attention_maps() const;  // one per block

  const VitBackboneOptions options;
  std::vector<std::shared_ptr<Conv2d>> stem;  // Conv_1 … Conv_n; empty with patches
  std::shared_ptr<Linear> patch_embed;  // x_p E + b_E: (P²·C) -> D; its weight is Eᵀ (D/2 -> D
                                        // after a stem); null with cct_details
  Tensor cls_token;                     // x_class (1, 1, D); undefined without a class token
  Tensor pos_embed;                     // E_pos (1, T, D)
  std::shared_ptr<Dropout> dropout;     // on z_0; only when options.dropout > 0
  std::vector<std::shared_ptr<TransformerEncoderBlock>> blocks;
  std::shared_ptr<LayerNorm> norm;      // LN, applied by the caller to the tokens it reads
};

}  // namespace uwaga::nn
