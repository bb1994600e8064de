#pragma once
// The Vision Transformer (SEEDS §6). An image x ∈ R^{H×W×C} is cut into N = HW/P² patches
// x_p ∈ R^{N×(P²·C)}; each is embedded linearly with E ∈ R^{(P²·C)×D}; a learnable class token
// is put in front and learnable position embeddings E_pos ∈ R^{(N+1)×D} are added:
//   z_0 = [x_class; x_p^1 E; x_p^2 E; …; x_p^N E] + E_pos
// then L pre-LN encoder blocks (SEEDS §5) — all of that is the backbone (nn/vit_backbone.h) —
// and the classifier reads the class token's final state: y = LN(z_L^0),
// logits = y W_headᵀ + b_head. The head is one Linear layer, not the notes' MLP head: the ViT
// paper uses a hidden layer only for pre-training.
//
// Parameter names follow timm (cls_token, pos_embed, blocks.<i>.{norm1,attn.qkv,attn.proj,norm2,
// mlp.fc1,mlp.fc2}, norm, head) except the patch embedding, patch_embed.weight (D, P²·C), a
// Linear where timm's is a Conv2d (nn/vit_backbone.h). The backbone's parameters are listed as
// the classifier's own (no "backbone." prefix), so checkpoints keep these names.
// With stem "conv" or "cct" convolutions replace the patch embedding (nn/vit_backbone.h).
//
// With pool "seq" there is no class token: sequence pooling (CCT's SeqPool, Hassani et al. 2021)
// lets the model weigh its own tokens. Each normalised token's state y_t = LN(z_L^t) gets a score
// from a Linear D -> 1, a softmax over the T = N tokens turns the scores into weights, and the
// head reads the weighted mean:
//   a = softmax_t(y_t w_pool + b_pool) ∈ R^T,   y = Σ_t a_t y_t = aᵀ Y,   logits = y W_headᵀ + b_head
// (attention_pool.{weight, bias}, CCT's names). Every token's state then reaches the loss, where
// the class token's design sends the gradient through one token alone.
// Init: as the backbone's, then attention_pool's and the head's Linear (trunc-normal(0, 0.02),
// bias 0).
#include <string>
#include <vector>

#include "nn/linear.h"
#include "nn/model.h"
#include "nn/vit_backbone.h"

namespace uwaga::nn {

struct VitConfig {
  std::int64_t image_size = 28;  // H = W
  std::int64_t channels = 1;     // C
  std::int64_t patch = 7;        // P
  std::int64_t dim = 64;         // D
  std::int64_t depth = 6;        // L
  std::int64_t heads = 4;        // h
  std::int64_t mlp_dim = 128;
  std::int64_t num_classes = 10;
  // How the attention layers compute (nn/multi_head_attention.h): the fused kernel, or the
  // readable reference path. The same numbers up to rounding; a way of computing, not part of the
  // model, so it is not in the JSON (a run chooses it with --attention).
  AttentionPath attention = AttentionPath::fast;
  double drop_path = 0.0;  // stochastic depth of the last block (nn/vit_backbone.h); 0: off
  double dropout = 0.0;    // on z_0 and the blocks' branch outputs (nn/vit_backbone.h); 0: off
  double attention_dropout = 0.0;  // on the blocks' attention weights (vit_backbone.h); 0: off
  // How the patches become tokens: "patch" (a Linear on each P×P patch, SEEDS §6) or "conv"
  // (3×3 stride-2 convolutions with ReLU, then a Linear: nn/vit_backbone.h's conv stem).
  std::string stem = "patch";  // or "cct": 3×3 convolutions with max pooling (vit_backbone.h)
  // What the head reads: "cls", the class token's state, or "seq", sequence pooling (above).
  std::string pool = "cls";
  // With stem "cct" and pool "seq": CCT's own model, exactly as their code (nn/vit_backbone.h):
  // no Linear after the tokenizer, no qkv bias, LayerNorm between the block's branches, CCT's
  // init. CCT-4/3x2's shape then has its 482,123 parameters.
  bool cct_details = false;

  std::int64_t num_patches() const;  // N = (H/P)²; fails unless 1 ≤ P ≤ H
  bool class_token() const { return pool == "cls"; }
  // N + 1 with the class token, N with sequence pooling
  std::int64_t tokens() const { return num_patches() + (class_token() ? 1 : 0); }
  std::int64_t patch_dim() const { return patch * patch * channels; }  // P²·C
  Stem backbone_stem() const;  // the stem's name as the backbone's enum
  // Multiply-adds ×2 of one forward pass on one image (matrix products only).
  std::int64_t forward_flops() const;
  // The backbone of this configuration: a square image, with the class token.
  VitBackboneOptions backbone() const;
  // Throws an Error naming the offending field when the configuration cannot work.
  void validate() const;
  std::string to_json() const;
  static VitConfig from_json(const std::string& json);

  // The JSON fields, one list for to_json and from_json (core/json_fields.h).
  template <class Field>
  static void fields(Field&& field) {
    field("image_size", &VitConfig::image_size);
    field("channels", &VitConfig::channels);
    field("patch", &VitConfig::patch);
    field("dim", &VitConfig::dim);
    field("depth", &VitConfig::depth);
    field("heads", &VitConfig::heads);
    field("mlp_dim", &VitConfig::mlp_dim);
    field("num_classes", &VitConfig::num_classes);
    field("drop_path", &VitConfig::drop_path);
    field("dropout", &VitConfig::dropout);
    field("attention_dropout", &VitConfig::attention_dropout);
    field("stem", &VitConfig::stem);
    field("pool", &VitConfig::pool);
    field("cct_details", &VitConfig::cct_details);
  }
};

class VisionTransformer : public Model {
 public:
  VisionTransformer(const VitConfig& config, Generator& gen);

  Tensor forward(const Tensor& images);  // (B, C, H, W) -> logits (B, classes)
  Tensor forward_batch(const std::vector<Tensor>& inputs) override;  // {images}
  std::shared_ptr<Model> replica() const override;

  // Keeps each block's attention weights (B, h, T, T) from the next forward on, and with pool
  // "seq" the pooling weights a (B, T).
  void keep_attention(bool on) { backbone->keep_attention(on), keep_pooling_ = on; }
  std::vector<Tensor> attention_maps() const { return backbone->attention_maps(); }
  Tensor pooling_weights() const { return pooling_; }  // undefined with pool "cls"

  const VitConfig config;
  std::shared_ptr<VitBackbone> backbone;  // patch_embed, cls_token, pos_embed, blocks, norm
  std::shared_ptr<Linear> attention_pool;  // w_pool, b_pool: D -> 1; only with pool "seq"
  std::shared_ptr<Linear> head;

 private:
  bool keep_pooling_ = false;
  Tensor pooling_;  // a (B, T) of the last forward with keep_attention on
};

}  // namespace uwaga::nn
