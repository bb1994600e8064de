// Part 4 of uwaga-walkthrough: the backward pass of one self-attention layer, written out.
// Forward (part 1):  Q = X W_Q,  K = X W_K,  V = X W_V,  E = Q Kᵀ/√d_k,  A = softmax(E),  Y = A V.
// Given dY = ∂L/∂Y, the chain rule through each line, last line first:
//   Y = A V            dA = dY Vᵀ                      dV = Aᵀ dY
//   A = softmax(E)     dE_ij = A_ij (dA_ij − Σ_k dA_ik A_ik)     (the softmax's Jacobian, row by row)
//   E = Q Kᵀ/√d_k      dQ = dE K / √d_k                dK = dEᵀ Q / √d_k
//   Q, K, V = X W_•    dW_Q = Xᵀ dQ,  dW_K = Xᵀ dK,  dW_V = Xᵀ dV
//                      dX = dQ W_Qᵀ + dK W_Kᵀ + dV W_Vᵀ   (X feeds all three, so its gradients add)
// A masked score (causal) has A_ij = 0, so its dE_ij is 0: no gradient flows to a hidden key.
// Each gradient is checked against autograd (the engine of core/autograd.h running the layer's
// backward rules), in the order computed here, so the first that disagrees is the wrong line;
// and one entry against a finite difference.
#include "apps/walkthrough/attention_backward.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/walkthrough/walkthrough_print.h"
#include "core/elementwise.h"
#include "core/matmul.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "nn/init.h"
#include "nn/self_attention.h"
#include "nn/softmax.h"

namespace uwaga::walkthrough {

// Y = A V
void output_backward(AttentionGradients& g, const AttentionSteps& s) {
  g.dA = matmul(g.dY, transpose(s.V, 0, 1));  // (N, N)
  g.dV = matmul(transpose(s.A, 0, 1), g.dY);  // (N, d_v)
}

// A = softmax(E): ∂A_ij/∂E_ik = A_ij (δ_jk − A_ik), so dE_ik = Σ_j dA_ij A_ij (δ_jk − A_ik)
// = A_ik (dA_ik − Σ_j dA_ij A_ij).
void softmax_backward(AttentionGradients& g, const AttentionSteps& s) {
  const Tensor row_dot = sum(g.dA * s.A, {1}, true);  // (N, 1)
  g.dE = s.A * (g.dA - row_dot);                      // (N, N)
}

// E = Q Kᵀ / √d_k
void scores_backward(AttentionGradients& g, const AttentionSteps& s) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.Q.size(1)));
  g.dQ = matmul(g.dE, s.K) * scale;                     // (N, d_k)
  g.dK = matmul(transpose(g.dE, 0, 1), s.Q) * scale;    // (N, d_k)
}

// Q = X W_Q, K = X W_K, V = X W_V
void projections_backward(AttentionGradients& g, const Tensor& X, const Tensor& W_Q,
                          const Tensor& W_K, const Tensor& W_V) {
  const Tensor Xt = transpose(X, 0, 1);
  g.dW_Q = matmul(Xt, g.dQ);
  g.dW_K = matmul(Xt, g.dK);
  g.dW_V = matmul(Xt, g.dV);
  g.dX = matmul(g.dQ, transpose(W_Q, 0, 1)) + matmul(g.dK, transpose(W_K, 0, 1)) +
         matmul(g.dV, transpose(W_V, 0, 1));
}

AttentionGradients autograd_gradients(const AttentionSteps& s, const Tensor& X,
                                      nn::SelfAttention& layer, const Tensor& dY, bool causal) {
  const auto leaf = [](const Tensor& t) { return t.detach().clone().requires_grad_(); };
  AttentionGradients r;
  r.dY = dY;
  {  // Y = A V
    const Tensor A = leaf(s.A), V = leaf(s.V);
    matmul(A, V).backward(dY);
    r.dA = A.grad(), r.dV = V.grad();
  }
  {  // A = softmax(E); a masked score is −∞, its weight 0 and so its gradient 0
    const Tensor E = leaf(s.E);
    nn::softmax(E, 1).backward(r.dA);
    r.dE = E.grad();
  }
  {  // E = Q Kᵀ / √d_k (the mask replaces only scores whose gradient is 0)
    const Tensor Q = leaf(s.Q), K = leaf(s.K);
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.Q.size(1)));
    (matmul(Q, transpose(K, 0, 1)) * scale).backward(r.dE);
    r.dQ = Q.grad(), r.dK = K.grad();
  }
  // The whole layer in one call, as the library computes it.
  const Tensor X_leaf = leaf(X);
  for (Tensor* w : {&layer.W_Q, &layer.W_K, &layer.W_V}) w->zero_grad();
  layer.forward(X_leaf, {.causal = causal}).backward(dY);
  r.dW_Q = layer.W_Q.grad(), r.dW_K = layer.W_K.grad(), r.dW_V = layer.W_V.grad();
  r.dX = X_leaf.grad();
  return r;
}

void check_against_autograd(const AttentionGradients& mine, const AttentionGradients& autograd) {
  struct Entry {
    const char* name;
    const char* formula;
    Tensor AttentionGradients::*field;
  };
  static const Entry kOrder[] = {
      {"dA", "dY V^T", &AttentionGradients::dA},
      {"dV", "A^T dY", &AttentionGradients::dV},
      {"dE", "A * (dA - rowsum(dA * A))", &AttentionGradients::dE},
      {"dQ", "dE K / sqrt(d_k)", &AttentionGradients::dQ},
      {"dK", "dE^T Q / sqrt(d_k)", &AttentionGradients::dK},
      {"dW_Q", "X^T dQ", &AttentionGradients::dW_Q},
      {"dW_K", "X^T dK", &AttentionGradients::dW_K},
      {"dW_V", "X^T dV", &AttentionGradients::dW_V},
      {"dX", "dQ W_Q^T + dK W_K^T + dV W_V^T", &AttentionGradients::dX},
  };
  constexpr double kTolerance = 1e-12;  // float64
  std::printf("\nEach gradient against autograd, in the order computed above (dA to dK: each "
              "step's backward\nin autograd, fed autograd's gradient of the step after it; dW "
              "and dX: the library's layer,\nnn::SelfAttention::forward(X).backward(dY)):\n");
  for (const Entry& e : kOrder) {
    const Tensor& got = mine.*e.field;
    const Tensor& want = autograd.*e.field;
    const double d = max_difference(got, want);
    const bool ok = d < kTolerance;
    std::printf("check: %-4s = %-32s largest difference %.3g  %s\n", e.name, e.formula, d,
                ok ? "OK" : "NOT OK");
    if (!ok)
      fail("the walkthrough's ", e.name, " = ", e.formula, " disagrees with autograd (largest "
           "difference ", d, "): the first gradient of the backward pass that does, so the "
           "mistake is in its line; the gradients after it are computed from it");
  }
}

void attention_backward(const Tensor& X, std::int64_t d_k, bool causal, Generator& gen) {
  const std::int64_t D = X.size(1);
  nn::SelfAttention layer({.d_x = D, .d_k = d_k, .d_v = d_k}, gen);
  layer.to(DType::Float64);
  for (Tensor* w : {&layer.W_Q, &layer.W_K, &layer.W_V})
    nn::init::normal(*w, gen, 1.0 / std::sqrt(static_cast<double>(D)));

  heading(str("Part 4: the backward pass of one self-attention layer, D_X = ", D, ", d_k = d_v = ",
              d_k, causal ? ", causal" : ""));
  std::printf(
      "A loss L reaches this layer as dY = dL/dY, one row per word. Here dY is random (the\n"
      "layer is not part of a model with a loss); L = sum(Y * dY) is the loss whose gradient\n"
      "with respect to Y it is. The forward pass runs as in part 1, with new random weights.\n");
  AttentionSteps s;
  queries_keys_values(s, X, layer.W_Q, layer.W_K, layer.W_V);
  alignment_scores(s);
  if (causal) causal_mask(s);
  attention_weights(s);
  attention_output(s);
  show("A", s.A, "the attention weights of this forward pass", kWords, kWords);

  AttentionGradients g;
  g.dY = Tensor::randn(s.Y.shape(), gen, DType::Float64);
  show("dY", g.dY, "= dL/dY   given (random here)", kWords);
  output_backward(g, s);
  show("dA", g.dA, "= dY V^T   (Y = A V)", kWords, kWords);
  show("dV", g.dV, "= A^T dY   each value row collects the gradient of every word that read it",
       kWords);
  softmax_backward(g, s);
  show("dE", g.dE, "= A * (dA - rowsum(dA * A))   the softmax's backward; each row sums to 0",
       kWords, kWords);
  scores_backward(g, s);
  show("dQ", g.dQ, "= dE K / sqrt(d_k)", kWords);
  show("dK", g.dK, "= dE^T Q / sqrt(d_k)", kWords);
  projections_backward(g, X, layer.W_Q, layer.W_K, layer.W_V);
  show("dW_Q", g.dW_Q, "= X^T dQ   what the optimizer will step W_Q against");
  show("dW_K", g.dW_K, "= X^T dK");
  show("dW_V", g.dW_V, "= X^T dV");
  show("dX", g.dX, "= dQ W_Q^T + dK W_K^T + dV W_V^T   passed on to the layer below", kWords);

  check_against_autograd(g, autograd_gradients(s, X, layer, g.dY, causal));

  // One entry by finite differences: dL/dW_Q[0][0] ≈ (L(w + h) − L(w − h)) / 2h.
  const double h = 1e-6, w = layer.W_Q.at({0, 0});
  const auto loss_at = [&](double value) {
    layer.W_Q.set({0, 0}, value);
    return sum(layer.forward(X, {.causal = causal}) * g.dY).item();
  };
  const double numeric = (loss_at(w + h) - loss_at(w - h)) / (2 * h);
  layer.W_Q.set({0, 0}, w);
  const double analytic = g.dW_Q.at({0, 0});
  const double error = std::abs(numeric - analytic);
  std::printf("\nfinite differences: (L(W_Q[0][0] + h) - L(W_Q[0][0] - h)) / 2h = %.10f with h = "
              "1e-6,\n  dW_Q[0][0] above = %.10f, difference %.2g  %s\n",
              numeric, analytic, error, error < 1e-7 ? "OK" : "NOT OK");
  if (!(error < 1e-7)) fail("the walkthrough's dW_Q[0][0] disagrees with finite differences");
}

}  // namespace uwaga::walkthrough
