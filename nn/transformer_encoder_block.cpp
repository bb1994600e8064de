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
  Tensor z1 = attn->forward(norm1->forward(z), mask) + z;  // z′ = MSA(LN(z)) + z
  return mlp->forward(norm2->forward(z1)) + z1;            // z  = MLP(LN(z′)) + z′
}

}  // namespace uwaga::nn
