#pragma once
// Which keys each query of an attention may look at (SEEDS §2: the mask added to E before the
// softmax). Used by every attention in nn/ — the formula (scaled_dot_product_attention.h), the
// fused kernel (attention_kernels.h), the modules above them — so it sits below them all.
#include "core/tensor.h"

namespace uwaga::nn {

// Which keys a query may not look at. Masked scores become −∞ before the softmax, so their
// weight is exactly 0.
struct AttentionMask {
  // (B, S), nonzero = padding: no query attends to that key. B is the first dim of Q.
  Tensor key_padding{};
  // Query i may attend to keys j ≤ i only (the decoder may not look at future words). With
  // T ≠ S the mask is aligned top-left, as torch.tril(ones(T, S)).
  bool causal = false;
  bool empty() const { return !key_padding.defined() && !causal; }
};

}  // namespace uwaga::nn
