#pragma once
// Self-attention (SEEDS §3): one set of inputs X serves as queries, keys and values,
//   Q = X W_Q,  K = X W_K,  V = X W_V,  Y = softmax(Q Kᵀ / √d_k) V.
// W_Q and W_K share the width d_k (so q·k is defined); W_V may differ (d_v).
// Weights are stored as in the notes (X W). Init: trunc-normal(0, 0.02).
#include "core/random.h"
#include "nn/module.h"
#include "nn/scaled_dot_product_attention.h"

namespace uwaga::nn {

struct SelfAttentionOptions {
  std::int64_t d_x = 0;  // D_X, the width of the inputs X
  std::int64_t d_k = 0;  // the width of the queries and keys
  std::int64_t d_v = 0;  // the width of the values and outputs

  // Throws an Error naming the offending field when the options cannot work.
  void validate() const;
};

class SelfAttention : public Module {
 public:
  SelfAttention(const SelfAttentionOptions& options, Generator& gen);
  // X (..., N, D_X) -> Y (..., N, d_v). `weights` receives A (..., N, N).
  Tensor forward(const Tensor& X, const AttentionMask& mask = {}, Tensor* weights = nullptr) const;

  const SelfAttentionOptions options;
  Tensor W_Q;  // (D_X, d_k), named "w_q"
  Tensor W_K;  // (D_X, d_k), named "w_k"
  Tensor W_V;  // (D_X, d_v), named "w_v"
};

}  // namespace uwaga::nn
