#include "nn/transformer_encoder_block.h"

#include "core/elementwise.h"

namespace uwaga::nn {

TransformerEncoderBlock::TransformerEncoderBlock(std::int64_t dim, std::int64_t heads,
                                                 std::int64_t mlp_dim, Generator& gen) {
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(dim));
  attn = register_module("attn", std::make_shared<MultiHeadAttention>(
                                     MultiHeadAttentionOptions{dim, heads, false}, gen));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(dim));
  mlp = register_module("mlp", std::make_shared<MLP>(dim, mlp_dim, gen));
}

Tensor TransformerEncoderBlock::forward(const Tensor& z, const AttentionMask& mask) {
  // z is z_{ℓ−1}, z1 is z′_ℓ.
  Tensor z1 = attn->forward(norm1->forward(z), mask) + z;  // z′_ℓ = MSA(LN(z_{ℓ−1})) + z_{ℓ−1}
  return mlp->forward(norm2->forward(z1)) + z1;            // z_ℓ  = MLP(LN(z′_ℓ)) + z′_ℓ
}

}  // namespace uwaga::nn
