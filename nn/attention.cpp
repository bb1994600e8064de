#include "nn/attention.h"

#include "core/matmul.h"
#include "nn/init.h"

namespace uwaga::nn {

Attention::Attention(std::int64_t d_x, std::int64_t d_q, std::int64_t d_v, Generator& gen) {
  if (d_x < 1 || d_q < 1 || d_v < 1)
    fail("Attention: widths D_X ", d_x, ", D_Q ", d_q, ", D_V ", d_v, " must be positive");
  W_K = register_parameter("w_k", Tensor::empty({d_x, d_q}));
  W_V = register_parameter("w_v", Tensor::empty({d_x, d_v}));
  init::trunc_normal(W_K, gen, 0.02);
  init::trunc_normal(W_V, gen, 0.02);
}

Tensor Attention::forward(const Tensor& Q, const Tensor& X, const AttentionMask& mask,
                          Tensor* weights) const {
  Tensor K = matmul(X, W_K);  // K = X W_K   (..., N_X, D_Q)
  Tensor V = matmul(X, W_V);  // V = X W_V   (..., N_X, D_V)
  // E = Q Kᵀ/√D_Q, A = softmax(E), Y = A V
  return scaled_dot_product_attention(Q, K, V, mask, weights);
}

}  // namespace uwaga::nn
