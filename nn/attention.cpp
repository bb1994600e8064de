#include "nn/attention.h"

#include "core/matmul.h"
#include "nn/init.h"

namespace uwaga::nn {

void AttentionOptions::validate() const {
  if (d_x < 1) fail("AttentionOptions: d_x (D_X) must be positive, got ", d_x);
  if (d_q < 1) fail("AttentionOptions: d_q (D_Q) must be positive, got ", d_q);
  if (d_v < 1) fail("AttentionOptions: d_v (D_V) must be positive, got ", d_v);
}

Attention::Attention(const AttentionOptions& o, Generator& gen) : options(o) {
  o.validate();
  const Init trunc_normal = [&](Tensor& w) { init::trunc_normal(w, gen, 0.02); };
  W_K = register_parameter("w_k", {o.d_x, o.d_q}, trunc_normal);
  W_V = register_parameter("w_v", {o.d_x, o.d_v}, trunc_normal);
}

Tensor Attention::forward(const Tensor& Q, const Tensor& X, const AttentionMask& mask,
                          Tensor* weights) const {
  Tensor K = matmul(X, W_K);  // K = X W_K   (..., N_X, D_Q)
  Tensor V = matmul(X, W_V);  // V = X W_V   (..., N_X, D_V)
  // E = Q Kᵀ/√D_Q, A = softmax(E), Y = A V
  return scaled_dot_product_attention(Q, K, V, mask, weights);
}

}  // namespace uwaga::nn
