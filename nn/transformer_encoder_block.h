#pragma once
// The transformer encoder block, pre-LN as in ViT (SEEDS §5):
//   z′_ℓ = MSA(LN(z_{ℓ−1})) + z_{ℓ−1}   multi-head self-attention: the only place vectors interact
//   z_ℓ  = MLP(LN(z′_ℓ)) + z′_ℓ          the MLP works on each vector on its own
// for block ℓ = 1…L, taking z_{ℓ−1} and returning z_ℓ.
// The residual additions need the attention output to have the input's width D.
#include "nn/layer_norm.h"
#include "nn/mlp.h"
#include "nn/multi_head_attention.h"

namespace uwaga::nn {

class TransformerEncoderBlock : public Module {
 public:
  TransformerEncoderBlock(std::int64_t dim, std::int64_t heads, std::int64_t mlp_dim,
                          Generator& gen);
  Tensor forward(const Tensor& z, const AttentionMask& mask = {});  // (B, N, D) -> (B, N, D)

  std::shared_ptr<LayerNorm> norm1;
  std::shared_ptr<MultiHeadAttention> attn;
  std::shared_ptr<LayerNorm> norm2;
  std::shared_ptr<MLP> mlp;
};

}  // namespace uwaga::nn
