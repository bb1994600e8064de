#pragma once
// Scaled dot-product attention (SEEDS §2–3):
//   E = Q Kᵀ / √d_k          alignment scores, (T × S) for each batch element and head
//   A = softmax(E + mask)    attention weights, along each row (each row sums to 1)
//   Y = A V                  each output row is a weighted average of the value rows
// Row by row (the notes' per-token form, SEEDS §3, for query i):
//   A_it = exp(q_i·k_t/√d_k) / Σ_j exp(q_i·k_j/√d_k),   y_i = Σ_t A_it v_t
// Names: T = N_Q queries, S = N_X keys and values, d_k = D_Q, d_v = D_V (SEEDS §2).
#include <cstdint>

#include "core/tensor.h"
#include "nn/attention_dropout.h"
#include "nn/attention_mask.h"

namespace uwaga::nn {

// Q (..., T, d_k), K (..., S, d_k), V (..., S, d_v), with identical leading dims (e.g. (B, H)).
// Returns Y (..., T, d_v). When `weights` is given it receives A (..., T, S).
// With `drop` on (training), Y = (A ⊙ M) V with a dropout mask M on the weights
// (nn/attention_dropout.h); `weights` still receives A.
// A query row whose keys are all masked gets A = 0 and Y = 0 (rather than 0/0 = NaN); its
// gradient is 0.
// The fast path: one autograd node with a hand-derived backward, the fused kernel of
// nn/attention_kernels.h.
Tensor scaled_dot_product_attention(const Tensor& Q, const Tensor& K, const Tensor& V,
                                    const AttentionMask& mask = {}, Tensor* weights = nullptr,
                                    const AttentionDropout& drop = {});

// The reference: the same formula line by line from matmul, masked_fill and softmax_composed, so
// autograd derives its backward; tests check the fast path against it. Arguments and results as
// above.
Tensor scaled_dot_product_attention_composed(const Tensor& Q, const Tensor& K, const Tensor& V,
                                             const AttentionMask& mask = {},
                                             Tensor* weights = nullptr,
                                             const AttentionDropout& drop = {});

// The plain loops of one (T × S) problem (one batch element and head), contiguous: Q (T, d_k),
// K (S, d_k), V (S, d_v) give Y (T, d_v) and A (T, S). `causal`: query i sees keys j ≤ i; `pad`
// (S bytes, or null): 1 = a padding key, seen by no query. A query that sees no key gets A = 0
// and Y = 0, as above; a NaN score makes its query's weights NaN. Backward writes dQ, dK, dV
// from dY and the saved A. The fast path computes the same up to rounding.
template <class Real>
void attention_forward_reference(Real* Y, Real* A, const Real* Q, const Real* K, const Real* V,
                                 std::int64_t T, std::int64_t S, std::int64_t dk,
                                 std::int64_t dv, bool causal, const unsigned char* pad);
template <class Real>
void attention_backward_reference(Real* dQ, Real* dK, Real* dV, const Real* dY, const Real* Q,
                                  const Real* K, const Real* V, const Real* A, std::int64_t T,
                                  std::int64_t S, std::int64_t dk, std::int64_t dv);

}  // namespace uwaga::nn
