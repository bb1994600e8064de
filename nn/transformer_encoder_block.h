#pragma once
// The transformer encoder block, pre-LN as in ViT (SEEDS §5):
//   z′_ℓ = MSA(LN(z_{ℓ−1})) + z_{ℓ−1}   multi-head self-attention: the only place vectors interact
//   z_ℓ  = MLP(LN(z′_ℓ)) + z′_ℓ          the MLP works on each vector on its own
// for block ℓ = 1…L, taking z_{ℓ−1} and returning z_ℓ.
// With norm `between` (CCT's TransformerEncoderLayer, Hassani et al. 2021) the second LayerNorm
// normalises the residual stream itself, between the branches, and the MLP adds to that:
//   z′_ℓ = LN₂(z_{ℓ−1} + MSA(LN₁(z_{ℓ−1})))
//   z_ℓ  = z′_ℓ + MLP(z′_ℓ)
// (CCT's pre_norm is LN₁, norm1, and its norm1 is LN₂, norm2: the parameter names stay ViT's).
// Pre-LN leaves the residual stream un-normalised from z_0 to z_L; between-LN rescales it once
// per block, so the MLP's input and the stream it adds to are one and the same.
// The residual additions need the attention output to have the input's width D.
// With stochastic depth (drop_path > 0, training only) each branch is dropped per example:
//   z′_ℓ = DropPath(MSA(LN(z_{ℓ−1}))) + z_{ℓ−1},  z_ℓ = DropPath(MLP(LN(z′_ℓ))) + z′_ℓ
// (nn/drop_path.h). With dropout (dropout > 0, training only; nn/dropout.h) each branch's output
// is dropped element by element first, as in the original Transformer and s-chh's ViT:
//   z′_ℓ = Dropout(MSA(LN(z_{ℓ−1}))) + z_{ℓ−1},  z_ℓ = Dropout(MLP(LN(z′_ℓ))) + z′_ℓ
// With attention dropout (attention_dropout > 0, training only) the MSA drops weights of its
// softmax inside (nn/attention_dropout.h, attn.attn_drop).
// Evaluation, and all three at 0, compute the first two lines exactly.
#include "nn/drop_path.h"
#include "nn/dropout.h"
#include "nn/layer_norm.h"
#include "nn/mlp.h"
#include "nn/multi_head_attention.h"

namespace uwaga::nn {

// Where the block's second LayerNorm sits (formulas above): on the MLP's input (pre, ViT's) or on
// the residual stream between the branches (between, CCT's).
enum class BlockNorm { pre, between };

struct TransformerEncoderBlockOptions {
  std::int64_t dim = 0;      // D
  std::int64_t heads = 1;    // h; must divide D
  std::int64_t mlp_dim = 0;  // the MLP's hidden width
  AttentionPath attention = AttentionPath::fast;  // nn/multi_head_attention.h
  double drop_path = 0.0;    // probability of dropping each branch per example; 0: off
  double dropout = 0.0;      // probability of dropping each element of a branch's output; 0: off
  double attention_dropout = 0.0;  // probability of dropping each attention weight; 0: off
  GeluApproximation gelu = GeluApproximation::none;  // the MLP's GELU (GPT-2: tanh)
  BlockNorm norm = BlockNorm::pre;  // pre-LN (ViT) or LN between the branches (CCT)
  bool qkv_bias = true;             // the attention's qkv projection adds a bias (CCT: none)

  // Throws an Error naming the offending field when the options cannot work.
  void validate() const;
};

class TransformerEncoderBlock : public Module {
 public:
  TransformerEncoderBlock(const TransformerEncoderBlockOptions& options, Generator& gen);
  Tensor forward(const Tensor& z, const AttentionMask& mask = {});  // (B, N, D) -> (B, N, D)
  // The same block for generation: the attention reads and extends the cached keys and values
  // of the tokens before z (MultiHeadAttention::forward_cached). (B, n, D) -> (B, n, D).
  Tensor forward_cached(const Tensor& z, Tensor& K, Tensor& V);

  const TransformerEncoderBlockOptions options;
  std::shared_ptr<LayerNorm> norm1;
  std::shared_ptr<MultiHeadAttention> attn;
  std::shared_ptr<LayerNorm> norm2;
  std::shared_ptr<MLP> mlp;
  std::shared_ptr<DropPath> drop_path;  // only when options.drop_path > 0
  std::shared_ptr<Dropout> dropout;     // only when options.dropout > 0

 private:
  // The block's two residual steps around an attention `msa` (LN(z) -> (B, N, D)): the one
  // definition both forwards use.
  template <class Attention>
  Tensor residual_steps(const Tensor& z, Attention&& msa);
  // A branch's output as it joins the residual stream: dropout, then drop path, where they are on
  // (in training); the branch itself otherwise.
  Tensor regularised(const Tensor& branch);
};

}  // namespace uwaga::nn
