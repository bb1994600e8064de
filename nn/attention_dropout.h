#pragma once
// Attention dropout (the original Transformer's "dropout on the attention weights", timm's and
// CCT's attn_drop): in training each weight A_ij of A = softmax(E + mask) is zeroed with
// probability p and the survivors are scaled by 1/(1 − p) before the weighted average:
//   Ã = A ⊙ M,   M_ij = 0 with probability p, else 1/(1 − p),   Y = Ã V
// so E[Ã] = A and evaluation computes Y = A V. A query then averages a random subset of its
// values, which keeps the model from leaning on one key. The weights a caller asks for (the
// `weights` argument, attention maps) are A, before the drop.
// Both ways of computing attention take it: the composed formula applies dropout() to A
// (nn/scaled_dot_product_attention.h), the fused kernel draws the same mask with dropout_mask()
// and uses it in its hand-derived backward (nn/attention_kernels.cpp). Element (…, i, j) of A
// takes the same draw in both, so with the same generator state they drop the same weights.
#include "core/random.h"

namespace uwaga::nn {

struct AttentionDropout {
  double p = 0.0;            // probability of dropping each weight; 0: off
  Generator* gen = nullptr;  // draws M; needed when p > 0
  bool on() const { return p > 0; }
};

}  // namespace uwaga::nn
