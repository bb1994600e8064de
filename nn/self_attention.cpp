#include "nn/self_attention.h"

#include "core/matmul.h"
#include "nn/init.h"

namespace uwaga::nn {

void SelfAttentionOptions::validate() const {
  if (d_x < 1) fail("SelfAttentionOptions: d_x (D_X) must be positive, got ", d_x);
  if (d_k < 1) fail("SelfAttentionOptions: d_k must be positive, got ", d_k);
  if (d_v < 1) fail("SelfAttentionOptions: d_v must be positive, got ", d_v);
}

SelfAttention::SelfAttention(const SelfAttentionOptions& o, Generator& gen) : options(o) {
  o.validate();
  const Init trunc_normal = [&](Tensor& w) { init::trunc_normal(w, gen, 0.02); };
  W_Q = register_parameter("w_q", {o.d_x, o.d_k}, trunc_normal);
  W_K = register_parameter("w_k", {o.d_x, o.d_k}, trunc_normal);
  W_V = register_parameter("w_v", {o.d_x, o.d_v}, trunc_normal);
}

Tensor SelfAttention::forward(const Tensor& X, const AttentionMask& mask, Tensor* weights) const {
  Tensor Q = matmul(X, W_Q);  // (..., N, d_k)
  Tensor K = matmul(X, W_K);  // (..., N, d_k)
  Tensor V = matmul(X, W_V);  // (..., N, d_v)
  return scaled_dot_product_attention(Q, K, V, mask, weights);
}

}  // namespace uwaga::nn
