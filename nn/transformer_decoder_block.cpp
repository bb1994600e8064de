#include "nn/transformer_decoder_block.h"

#include "core/elementwise.h"

namespace uwaga::nn {

void TransformerDecoderBlockOptions::validate() const {
  if (dim < 1) fail("TransformerDecoderBlockOptions: dim must be positive, got ", dim);
  if (heads < 1) fail("TransformerDecoderBlockOptions: heads must be positive, got ", heads);
  if (dim % heads != 0)
    fail("TransformerDecoderBlockOptions: dim ", dim, " is not divisible by heads ", heads);
  if (mlp_dim < 1) fail("TransformerDecoderBlockOptions: mlp_dim must be positive, got ", mlp_dim);
}

TransformerDecoderBlock::TransformerDecoderBlock(const TransformerDecoderBlockOptions& o,
                                                 Generator& gen)
    : options(o) {
  o.validate();
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(o.dim));
  self_attn = register_module(
      "self_attn", std::make_shared<MultiHeadAttention>(
                       MultiHeadAttentionOptions{.dim = o.dim, .heads = o.heads, .path = o.attention}, gen));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(o.dim));
  cross_attn = register_module(
      "cross_attn",
      std::make_shared<MultiHeadAttention>(
          MultiHeadAttentionOptions{.dim = o.dim, .heads = o.heads, .cross = true, .path = o.attention}, gen));
  norm3 = register_module("norm3", std::make_shared<LayerNorm>(o.dim));
  mlp = register_module("mlp", std::make_shared<MLP>(MLPOptions{.dim = o.dim, .hidden = o.mlp_dim}, gen));
}

Tensor TransformerDecoderBlock::forward(const Tensor& x, const Tensor& memory,
                                        const Tensor& self_padding,
                                        const Tensor& memory_padding) {
  const AttentionMask causal{.key_padding = self_padding, .causal = true};
  const AttentionMask padded_memory{.key_padding = memory_padding};
  Tensor z1 = self_attn->forward(norm1->forward(x), causal) + x;
  Tensor z2 = cross_attn->forward(norm2->forward(z1), memory, padded_memory) + z1;
  return mlp->forward(norm3->forward(z2)) + z2;
}

}  // namespace uwaga::nn
