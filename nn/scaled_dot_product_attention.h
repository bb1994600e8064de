#pragma once
// Scaled dot-product attention (SEEDS §2–3):
//   E = Q Kᵀ / √d_k          alignment scores, (T × S) for each batch element and head
//   A = softmax(E + mask)    attention weights, along each row (each row sums to 1)
//   Y = A V                  each output row is a weighted average of the value rows
// Row by row (the notes' per-token form, SEEDS §3, for query i):
//   A_it = exp(q_i·k_t/√d_k) / Σ_j exp(q_i·k_j/√d_k),   y_i = Σ_t A_it v_t
// Names: T = N_Q queries, S = N_X keys and values, d_k = D_Q, d_v = D_V (SEEDS §2).
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
  Tensor key_padding{};
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
// Every head of multi-head attention at once (SEEDS §4), read straight out of the projections
// and written side by side, so no head is copied out or back in:
//   qkv (B, T, 3·h·d) = [Q | K | V] as the fused projection x W_QKVᵀ + b_QKV returns it; head i
//   of Q is columns i·d … (i+1)·d of Q, and likewise for K and V. Returns (B, T, h·d) =
//   Concat(head_1, …, head_h), head_i = softmax(Q_i K_iᵀ/√d_k + mask) V_i. `weights` receives
//   A (B, h, T, T). The same numbers as split_heads → scaled_dot_product_attention →
//   merge_heads (nn/multi_head_attention.h), as one autograd node.
Tensor attention_heads(const Tensor& qkv, std::int64_t heads, const AttentionMask& mask = {},
                       Tensor* weights = nullptr);
// Cross-attention: q (B, T, h·d) from the queries' sequence, kv (B, S, 2·h·d) = [K | V] from the
// memory. `weights` receives A (B, h, T, S).
Tensor attention_heads(const Tensor& q, const Tensor& kv, std::int64_t heads,
                       const AttentionMask& mask = {}, Tensor* weights = nullptr);

Tensor scaled_dot_product_attention_composed(const Tensor& Q, const Tensor& K, const Tensor& V,
                                             const AttentionMask& mask = {},
                                             Tensor* weights = nullptr);

}  // namespace uwaga::nn
