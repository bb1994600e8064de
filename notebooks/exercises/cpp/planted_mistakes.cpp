// One plausible mistake per exercise, for testing the checks themselves: CTest's
// exercises_planted runs the checks on these and requires every one to fail as wrong (not as
// "not implemented"), with the reason printed. Not a file for students: see exercises.cpp.
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

// Without subtracting the row's max: exp(1000) overflows.
Tensor softmax(const Tensor& E) {
  const Tensor e = exp(E);
  return e / sum(e, {-1}, true);
}

// The row-sum term forgotten.
Tensor softmax_backward(const Tensor& A, const Tensor& dA) { return A * dA; }

Tensor correct_softmax(const Tensor& E) {
  const Tensor e = exp(E - max(E, {-1}, true));
  return e / sum(e, {-1}, true);
}

// Without the 1/√d_k.
Tensor attention(const Tensor& Q, const Tensor& K, const Tensor& V) {
  return matmul(correct_softmax(matmul(Q, transpose(K, -2, -1))), V);
}

// The mask one step off: j > i + 1 hidden, so each query also sees the key after it.
Tensor causal_attention(const Tensor& Q, const Tensor& K, const Tensor& V) {
  const std::int64_t T = Q.size(-2), S = K.size(-2);
  Tensor later = Tensor::zeros({T, S}, Q.dtype());
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t j = i + 2; j < S; ++j) later.set({i, j}, 1.0);
  const Tensor E = matmul(Q, transpose(K, -2, -1)) / std::sqrt(static_cast<double>(Q.size(-1)));
  const Tensor masked = masked_fill(E, later, -std::numeric_limits<double>::infinity());
  return matmul(correct_softmax(masked), V);
}

// dx as if μ and σ did not depend on x: (dy γ)/σ.
LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& gamma, const Tensor& dy) {
  const Tensor mu = mean(x, {-1}, true);
  const Tensor sigma = sqrt(var(x, {-1}, true, 0) + 1e-5);
  const Tensor xhat = (x - mu) / sigma;
  return {dy * gamma / sigma, sum(dy * xhat, {0}), sum(dy, {0})};
}

// The head index and the width within a head swapped.
Tensor split_heads(const Tensor& x, std::int64_t heads) {
  const std::int64_t B = x.size(0), T = x.size(1), D = x.size(2);
  return permute(reshape(x, {B, T, D / heads, heads}), {0, 3, 1, 2});
}

Tensor merge_heads(const Tensor& y) {
  const std::int64_t B = y.size(0), h = y.size(1), T = y.size(2), d = y.size(3);
  return reshape(permute(y, {0, 2, 1, 3}), {B, T, h * d});
}

// Post-LN: the norm after the residual, as the original Transformer, not pre-LN.
Tensor block_forward(const Tensor& z, nn::TransformerEncoderBlock& block) {
  const Tensor z1 = block.norm1->forward(block.attn->forward(z) + z);
  return block.norm2->forward(block.mlp->forward(z1) + z1);
}

// Channels outermost in each patch instead of innermost.
Tensor patchify(const Tensor& images, std::int64_t P) {
  const std::int64_t B = images.size(0), C = images.size(1), H = images.size(2),
                     W = images.size(3);
  const Tensor x = reshape(images, {B, C, H / P, P, W / P, P});
  return reshape(permute(x, {0, 2, 4, 1, 3, 5}), {B, (H / P) * (W / P), P * P * C});
}

// zero_grad forgotten.
double train_step(nn::VisionTransformer& model, optim::Optimizer& optimizer, const Tensor& images,
                  const Tensor& labels) {
  const Tensor loss = nn::cross_entropy(model.forward(images), labels);
  loss.backward();
  optimizer.step();
  return loss.item();
}

// The last largest on a tie instead of the first.
std::int64_t greedy(const std::vector<double>& logits) {
  std::int64_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i)
    if (logits[i] >= logits[best]) best = static_cast<std::int64_t>(i);
  return best;
}

std::vector<double> top_k_probabilities(const std::vector<double>& logits, std::int64_t k,
                                        double temperature) {
  std::vector<std::int64_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return logits[a] > logits[b]; });
  std::vector<double> p(logits.size(), 0.0);
  double total = 0;
  for (std::int64_t i = 0; i < k; ++i)
    total += p[order[i]] = std::exp((logits[order[i]] - logits[order[0]]) / temperature);
  for (double& v : p) v /= total;
  return p;
}

// The mean over the rows forgotten.
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets) {
  Tensor d = correct_softmax(logits).detach().clone();
  for (std::int64_t r = 0; r < logits.size(0); ++r) {
    const auto t = static_cast<std::int64_t>(targets.flat(r));
    d.set({r, t}, d.at({r, t}) - 1.0);
  }
  return d;
}

// dK without the 1/√d_k (dQ has it).
AttentionGrads attention_backward(const Tensor& Q, const Tensor& K, const Tensor& V,
                                  const Tensor& dY) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(Q.size(-1)));
  const Tensor A = correct_softmax(matmul(Q, transpose(K, -2, -1)) * scale);
  const Tensor dA = matmul(dY, transpose(V, -2, -1));
  const Tensor dE = A * (dA - sum(dA * A, {-1}, true));
  return {dA, matmul(transpose(A, -2, -1), dY), dE, matmul(dE, K) * scale,
          matmul(transpose(dE, -2, -1), Q)};
}

}  // namespace uwaga::exercises
