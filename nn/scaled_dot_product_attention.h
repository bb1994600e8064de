#pragma once
// Scaled dot-product attention (SEEDS §2–3):
//   E = Q Kᵀ / √d_k          alignment scores, (T × S) for each batch element and head
//   A = softmax(E + mask)    attention weights, along each row (each row sums to 1)
//   Y = A V                  each output row is a weighted average of the value rows
//
// scaled_dot_product_attention runs as one autograd node with a hand-derived backward;
// scaled_dot_product_attention_composed is the same formula from matmul, masked_fill and
// softmax_composed, for tests and for reading.
#include "core/tensor.h"

namespace uwaga::nn {

// Which keys a query may not look at. Masked scores become −∞ before the softmax, so their
// weight is exactly 0.
struct AttentionMask {
  // (B, S), nonzero = padding: no query attends to that key. B is the first dim of Q.
  Tensor key_padding;
  // Query i may attend to keys j ≤ i only (the decoder may not look at future words). With
  // T ≠ S the mask is aligned top-left, as torch.tril(ones(T, S)).
  bool causal = false;
  bool empty() const { return !key_padding.defined() && !causal; }
};

// What the backward pass keeps from the forward pass.
struct AttentionSaved {
  Tensor A;  // (N, T, S) attention weights, N = product of the leading dims
};

// Q (..., T, d_k), K (..., S, d_k), V (..., S, d_v), with identical leading dims (e.g. (B, H)).
// Returns Y (..., T, d_v). When `weights` is given it receives A (..., T, S).
// A query row whose keys are all masked gets A = 0 and Y = 0 (rather than 0/0 = NaN); its
// gradient is 0.
Tensor scaled_dot_product_attention(const Tensor& Q, const Tensor& K, const Tensor& V,
                                    const AttentionMask& mask = {}, Tensor* weights = nullptr);
Tensor scaled_dot_product_attention_composed(const Tensor& Q, const Tensor& K, const Tensor& V,
                                             const AttentionMask& mask = {},
                                             Tensor* weights = nullptr);

}  // namespace uwaga::nn
