#include "nn/transformer_decoder_block.h"

#include "core/elementwise.h"

namespace uwaga::nn {

TransformerDecoderBlock::TransformerDecoderBlock(std::int64_t dim, std::int64_t heads,
                                                 std::int64_t mlp_dim, Generator& gen) {
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(dim));
  self_attn = register_module("self_attn", std::make_shared<MultiHeadAttention>(
                                               MultiHeadAttentionOptions{dim, heads, false}, gen));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(dim));
  cross_attn = register_module("cross_attn", std::make_shared<MultiHeadAttention>(
                                                 MultiHeadAttentionOptions{dim, heads, true}, gen));
  norm3 = register_module("norm3", std::make_shared<LayerNorm>(dim));
  mlp = register_module("mlp", std::make_shared<MLP>(dim, mlp_dim, gen));
}

Tensor TransformerDecoderBlock::forward(const Tensor& x, const Tensor& memory,
                                        const Tensor& self_padding,
                                        const Tensor& memory_padding) {
  Tensor z1 = self_attn->forward(norm1->forward(x), AttentionMask{self_padding, true}) + x;
  Tensor z2 =
      cross_attn->forward(norm2->forward(z1), memory, AttentionMask{memory_padding, false}) + z1;
  return mlp->forward(norm3->forward(z2)) + z2;
}

}  // namespace uwaga::nn
