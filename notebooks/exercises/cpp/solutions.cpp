// Solutions to the C++ exercises (exercises.h). Look only after trying. CTest runs the checks on
// these (exercises_solutions), so they are known to pass.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/elementwise.h"
#include "core/matmul.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "nn/cross_entropy.h"
#include "notebooks/exercises/cpp/exercises.h"

namespace uwaga::exercises {

// softmax(E) = softmax(E − c) for any c per row: with c the row's max no exp overflows.
Tensor softmax(const Tensor& E) {
  const Tensor e = exp(E - max(E, {-1}, true));
  return e / sum(e, {-1}, true);
}

// ∂A_ij/∂E_ik = A_ij (δ_jk − A_ik), so dE_ik = A_ik (dA_ik − Σ_j dA_ij A_ij).
Tensor softmax_backward(const Tensor& A, const Tensor& dA) {
  return A * (dA - sum(dA * A, {-1}, true));
}

Tensor attention(const Tensor& Q, const Tensor& K, const Tensor& V) {
  const double d_k = static_cast<double>(Q.size(-1));
  return matmul(softmax(matmul(Q, transpose(K, -2, -1)) / std::sqrt(d_k)), V);
}

Tensor causal_attention(const Tensor& Q, const Tensor& K, const Tensor& V) {
  const std::int64_t T = Q.size(-2), S = K.size(-2);
  Tensor future = Tensor::zeros({T, S}, Q.dtype());  // 1 above the diagonal
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t j = i + 1; j < S; ++j) future.set({i, j}, 1.0);
  const double d_k = static_cast<double>(Q.size(-1));
  const Tensor E = matmul(Q, transpose(K, -2, -1)) / std::sqrt(d_k);
  return matmul(softmax(masked_fill(E, future, -std::numeric_limits<double>::infinity())), V);
}

// x̂ = (x − μ)/σ, y = γ x̂ + β. dβ = Σ_rows dy, dγ = Σ_rows dy x̂; with dx̂ = dy γ,
// dx = (dx̂ − mean(dx̂) − x̂ mean(dx̂ x̂)) / σ (μ and σ depend on every x_j: the two mean terms).
LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& gamma, const Tensor& dy) {
  const Tensor mu = mean(x, {-1}, true);
  const Tensor sigma = sqrt(var(x, {-1}, true, 0) + 1e-5);
  const Tensor xhat = (x - mu) / sigma;
  const Tensor dxhat = dy * gamma;
  const Tensor dx =
      (dxhat - mean(dxhat, {-1}, true) - xhat * mean(dxhat * xhat, {-1}, true)) / sigma;
  return {dx, sum(dy * xhat, {0}), sum(dy, {0})};
}

Tensor split_heads(const Tensor& x, std::int64_t heads) {
  const std::int64_t B = x.size(0), T = x.size(1), D = x.size(2);
  return permute(reshape(x, {B, T, heads, D / heads}), {0, 2, 1, 3});
}

Tensor merge_heads(const Tensor& y) {
  const std::int64_t B = y.size(0), h = y.size(1), T = y.size(2), d = y.size(3);
  return reshape(permute(y, {0, 2, 1, 3}), {B, T, h * d});
}

Tensor block_forward(const Tensor& z, nn::TransformerEncoderBlock& block) {
  const Tensor z1 = block.attn->forward(block.norm1->forward(z)) + z;
  return block.mlp->forward(block.norm2->forward(z1)) + z1;
}

Tensor patchify(const Tensor& images, std::int64_t P) {
  const std::int64_t B = images.size(0), C = images.size(1), H = images.size(2),
                     W = images.size(3);
  const Tensor x = reshape(images, {B, C, H / P, P, W / P, P});  // b, c, r, i, s, j
  return reshape(permute(x, {0, 2, 4, 3, 5, 1}), {B, (H / P) * (W / P), P * P * C});
}

double train_step(nn::VisionTransformer& model, optim::Optimizer& optimizer, const Tensor& images,
                  const Tensor& labels) {
  const Tensor loss = nn::cross_entropy(model.forward(images), labels);
  loss.backward();
  optimizer.step();
  optimizer.zero_grad();
  return loss.item();
}

std::int64_t greedy(const std::vector<double>& logits) {
  return std::max_element(logits.begin(), logits.end()) - logits.begin();  // the first largest
}

std::vector<double> top_k_probabilities(const std::vector<double>& logits, std::int64_t k,
                                        double temperature) {
  std::vector<std::int64_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return logits[a] > logits[b]; });
  std::vector<double> p(logits.size(), 0.0);
  const double top = logits[order[0]] / temperature;
  double total = 0;
  for (std::int64_t i = 0; i < k; ++i) total += p[order[i]] = std::exp(logits[order[i]] / temperature - top);
  for (double& v : p) v /= total;
  return p;
}

// ∂L/∂z_r = (softmax(z_r) − onehot(t_r)) / n.
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets) {
  const std::int64_t n = logits.size(0);
  Tensor d = softmax(logits).detach().clone();
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t t = static_cast<std::int64_t>(targets.flat(r));
    d.set({r, t}, d.at({r, t}) - 1.0);
  }
  return d / static_cast<double>(n);
}

// The forward pass again, then the chain rule through each line, last line first:
// Y = A V: dA = dY Vᵀ, dV = Aᵀ dY; A = softmax(E): dE = A (dA − rowsum(dA A)) (exercise 2);
// E = Q Kᵀ/√d_k: dQ = dE K/√d_k, dK = dEᵀ Q/√d_k (the scale carries into both).
AttentionGrads attention_backward(const Tensor& Q, const Tensor& K, const Tensor& V,
                                  const Tensor& dY) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(Q.size(-1)));
  const Tensor A = softmax(matmul(Q, transpose(K, -2, -1)) * scale);
  const Tensor dA = matmul(dY, transpose(V, -2, -1));
  const Tensor dV = matmul(transpose(A, -2, -1), dY);
  const Tensor dE = softmax_backward(A, dA);
  return {dA, dV, dE, matmul(dE, K) * scale, matmul(transpose(dE, -2, -1), Q) * scale};
}

}  // namespace uwaga::exercises
