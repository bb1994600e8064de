#include "nn/transformer_encoder_block.h"

#include "core/elementwise.h"

namespace uwaga::nn {

void TransformerEncoderBlockOptions::validate() const {
  if (dim < 1) fail("TransformerEncoderBlockOptions: dim must be positive, got ", dim);
  if (heads < 1) fail("TransformerEncoderBlockOptions: heads must be positive, got ", heads);
  if (dim % heads != 0)
    fail("TransformerEncoderBlockOptions: dim ", dim, " is not divisible by heads ", heads);
  if (mlp_dim < 1) fail("TransformerEncoderBlockOptions: mlp_dim must be positive, got ", mlp_dim);
  if (!(drop_path >= 0 && drop_path < 1))
    fail("TransformerEncoderBlockOptions: drop_path must be in [0, 1), got ", drop_path);
  if (!(dropout >= 0 && dropout < 1))
    fail("TransformerEncoderBlockOptions: dropout must be in [0, 1), got ", dropout);
  if (!(attention_dropout >= 0 && attention_dropout < 1))
    fail("TransformerEncoderBlockOptions: attention_dropout must be in [0, 1), got ",
         attention_dropout);
}

TransformerEncoderBlock::TransformerEncoderBlock(const TransformerEncoderBlockOptions& o,
                                                 Generator& gen)
    : options(o) {
  o.validate();
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(o.dim));
  const MultiHeadAttentionOptions attention{.dim = o.dim, .heads = o.heads, .path = o.attention,
                                            .attention_dropout = o.attention_dropout,
                                            .qkv_bias = o.qkv_bias};
  attn = register_module("attn", std::make_shared<MultiHeadAttention>(attention, gen));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(o.dim));
  mlp = register_module("mlp", std::make_shared<MLP>(
                                 MLPOptions{.dim = o.dim, .hidden = o.mlp_dim, .gelu = o.gelu}, gen));
  // No parameters, and no draw from `gen`: a model with drop path or dropout starts from the same
  // weights. Their generators are reseeded for every step (Model::seed_dropout).
  if (o.drop_path > 0) drop_path = register_module("drop_path", std::make_shared<DropPath>(o.drop_path));
  if (o.dropout > 0) dropout = register_module("dropout", std::make_shared<Dropout>(o.dropout));
}

Tensor TransformerEncoderBlock::regularised(const Tensor& branch) {
  const Tensor dropped = dropout ? dropout->forward(branch) : branch;
  return drop_path ? drop_path->forward(dropped) : dropped;
}

template <class Attention>
Tensor TransformerEncoderBlock::residual_steps(const Tensor& z, Attention&& msa) {
  // z is z_{ℓ−1}, z1 is z′_ℓ; regularised() is the identity in evaluation.
  if (options.norm == BlockNorm::between) {
    // z′_ℓ = LN₂(z_{ℓ−1} + MSA(LN₁(z_{ℓ−1}))), then z_ℓ = z′_ℓ + MLP(z′_ℓ)
    Tensor z1 = norm2->forward(z + regularised(msa(norm1->forward(z))));
    return z1 + regularised(mlp->forward(z1));
  }
  Tensor z1 = regularised(msa(norm1->forward(z))) + z;        // z′_ℓ = MSA(LN(z_{ℓ−1})) + z_{ℓ−1}
  return regularised(mlp->forward(norm2->forward(z1))) + z1;  // z_ℓ  = MLP(LN(z′_ℓ)) + z′_ℓ
}

Tensor TransformerEncoderBlock::forward(const Tensor& z, const AttentionMask& mask) {
  return residual_steps(z, [&](const Tensor& x) { return attn->forward(x, mask); });
}

Tensor TransformerEncoderBlock::forward_cached(const Tensor& z, Tensor& K, Tensor& V) {
  return residual_steps(z, [&](const Tensor& x) { return attn->forward_cached(x, K, V); });
}

}  // namespace uwaga::nn
