#pragma once
// The general attention layer of the lecture notes (SEEDS §2): queries Q (N_Q × D_Q) look at
// inputs X (N_X × D_X) through learned W_K (D_X × D_Q) and W_V (D_X × D_V):
//   K = X W_K,   V = X W_V,   E = Q Kᵀ / √D_Q,   A = softmax(E) row-wise,   Y = A V
// Keys decide where to look, values decide what comes back. Entry by entry the scores are
//   E_ij = ⟨Q_i, K_j⟩ / √D_Q
// an unnormalised similarity: the cosine similarity q·k / (‖q‖‖k‖) without the norms.
// This is the alignment model of SEEDS §1, e = f_att(s_t, h_ij), a = softmax(e), context
// c = Σ a·h_ij, with f_att(q, k) = q·k/√D_Q: a row of Q plays the decoder state s_t, the rows of
// X the inputs h_ij (seen through W_K for the scores and W_V for what is averaged).
// Why √D_Q: for random q, k with unit-variance entries q·k has variance D_Q; undivided, large
// scores saturate the softmax (one weight near 1), its gradients vanish and training stalls.
// Weights are stored as in the notes (X W, not x Wᵀ). Init: trunc-normal(0, 0.02).
#include "core/random.h"
#include "nn/module.h"
#include "nn/scaled_dot_product_attention.h"

namespace uwaga::nn {

struct AttentionOptions {
  std::int64_t d_x = 0;  // D_X, the width of the inputs X
  std::int64_t d_q = 0;  // D_Q, the width of the queries and keys
  std::int64_t d_v = 0;  // D_V, the width of the values and outputs

  // Throws an Error naming the offending field when the options cannot work.
  void validate() const;
};

class Attention : public Module {
 public:
  Attention(const AttentionOptions& options, Generator& gen);
  // Q (..., N_Q, D_Q), X (..., N_X, D_X) -> Y (..., N_Q, D_V). `weights` receives A.
  Tensor forward(const Tensor& Q, const Tensor& X, const AttentionMask& mask = {},
                 Tensor* weights = nullptr) const;

  const AttentionOptions options;
  Tensor W_K;  // (D_X, D_Q), named "w_k"
  Tensor W_V;  // (D_X, D_V), named "w_v"
};

}  // namespace uwaga::nn
