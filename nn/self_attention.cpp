#include "nn/self_attention.h"

#include "core/matmul.h"
#include "nn/init.h"

namespace uwaga::nn {

SelfAttention::SelfAttention(std::int64_t d_x, std::int64_t d_k, std::int64_t d_v,
                             Generator& gen) {
  if (d_x < 1 || d_k < 1 || d_v < 1)
    fail("SelfAttention: widths D_X ", d_x, ", d_k ", d_k, ", d_v ", d_v, " must be positive");
  W_Q = register_parameter("w_q", Tensor::empty({d_x, d_k}));
  W_K = register_parameter("w_k", Tensor::empty({d_x, d_k}));
  W_V = register_parameter("w_v", Tensor::empty({d_x, d_v}));
  for (Tensor* w : {&W_Q, &W_K, &W_V}) init::trunc_normal(*w, gen, 0.02);
}

Tensor SelfAttention::forward(const Tensor& X, const AttentionMask& mask, Tensor* weights) const {
  Tensor Q = matmul(X, W_Q);  // (..., N, d_k)
  Tensor K = matmul(X, W_K);  // (..., N, d_k)
  Tensor V = matmul(X, W_V);  // (..., N, d_v)
  return scaled_dot_product_attention(Q, K, V, mask, weights);
}

}  // namespace uwaga::nn
