#pragma once
// The transformer decoder block ("Attention Is All You Need", in the pre-LN arrangement):
//   z1 = MaskedMSA(LN(x)) + x            causal self-attention: no looking at future words
//   z2 = CrossMHA(LN(z1), memory) + z1   queries from the decoder, keys/values from the encoder
//   y  = MLP(LN(z2)) + z2
// `memory` is the encoder's output, used as it is.
#include "nn/layer_norm.h"
#include "nn/mlp.h"
#include "nn/multi_head_attention.h"

namespace uwaga::nn {

struct TransformerDecoderBlockOptions {
  std::int64_t dim = 0;      // D
  std::int64_t heads = 1;    // h, for both attentions; must divide D
  std::int64_t mlp_dim = 0;  // the MLP's hidden width
  AttentionPath attention = AttentionPath::fast;  // of both attentions (nn/multi_head_attention.h)

  // Throws an Error naming the offending field when the options cannot work.
  void validate() const;
};

class TransformerDecoderBlock : public Module {
 public:
  TransformerDecoderBlock(const TransformerDecoderBlockOptions& options, Generator& gen);
  // x (B, T, D), memory (B, S, D) -> (B, T, D). The self-attention is always causal;
  // self_padding (B, T) and memory_padding (B, S) mark padded positions (or are undefined).
  Tensor forward(const Tensor& x, const Tensor& memory, const Tensor& self_padding = Tensor(),
                 const Tensor& memory_padding = Tensor());

  const TransformerDecoderBlockOptions options;
  std::shared_ptr<LayerNorm> norm1;
  std::shared_ptr<MultiHeadAttention> self_attn;
  std::shared_ptr<LayerNorm> norm2;
  std::shared_ptr<MultiHeadAttention> cross_attn;
  std::shared_ptr<LayerNorm> norm3;
  std::shared_ptr<MLP> mlp;
};

}  // namespace uwaga::nn
