#pragma once
// Scaled dot-product attention (SEEDS §2–3):
//   E = Q Kᵀ / √d_k          alignment scores, (T × S) for each batch element and head
//   A = softmax(E + mask)    attention weights, along each row (each row sums to 1)
//   Y = A V                  each output row is a weighted average of the value rows
// Row by row (the notes' per-token form, SEEDS §3, for query i):
//   A_it = exp(q_i·k_t/√d_k) / Σ_j exp(q_i·k_j/√d_k),   y_i = Σ_t A_it v_t
// Names: T = N_Q queries, S = N_X keys and values, d_k = D_Q, d_v = D_V (SEEDS §2).
#include "core/tensor.h"
#include "nn/attention_mask.h"

namespace uwaga::nn {

// Q (..., T, d_k), K (..., S, d_k), V (..., S, d_v), with identical leading dims (e.g. (B, H)).
// Returns Y (..., T, d_v). When `weights` is given it receives A (..., T, S).
// A query row whose keys are all masked gets A = 0 and Y = 0 (rather than 0/0 = NaN); its
// gradient is 0.
// The fast path: one autograd node with a hand-derived backward, the fused kernel of
// nn/attention_kernels.h.
Tensor scaled_dot_product_attention(const Tensor& Q, const Tensor& K, const Tensor& V,
                                    const AttentionMask& mask = {}, Tensor* weights = nullptr);

// The reference: the same formula line by line from matmul, masked_fill and softmax_composed, so
// autograd derives its backward; tests check the fast path against it. Arguments and results as
// above.
Tensor scaled_dot_product_attention_composed(const Tensor& Q, const Tensor& K, const Tensor& V,
                                             const AttentionMask& mask = {},
                                             Tensor* weights = nullptr);

}  // namespace uwaga::nn
