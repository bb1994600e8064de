// Part 3 of uwaga-walkthrough: one pre-LN transformer block (SEEDS §5), the block ViT and GPT
// stack L times, written out around the multi-head attention of part 2:
//   z′ = MSA(LN₁(z)) + z        z_out = MLP(LN₂(z′)) + z′        MLP(x) = GELU(x W₁ᵀ + b₁) W₂ᵀ + b₂
// and checked against nn::TransformerEncoderBlock::forward.
#include <cmath>
#include <cstdio>

#include "apps/walkthrough/attention_steps.h"
#include "apps/walkthrough/walkthrough_print.h"
#include "core/elementwise.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "nn/gelu.h"
#include "nn/init.h"
#include "nn/layer_norm.h"
#include "nn/transformer_encoder_block.h"

namespace uwaga::walkthrough {

namespace {

// LN(x) = γ ⊙ (x − μ)/σ + β for each row, printing μ and σ; returns LN(x) (N, D).
Tensor layer_norm_step(const std::string& name, const Tensor& x, const nn::LayerNorm& norm) {
  const Tensor mu = mean(x, {1}, true);                                     // (N, 1)
  const Tensor sigma = sqrt(var(x, {1}, true, /*correction=*/0) + norm.eps);  // (N, 1)
  show(str("mu (", name, ")"), reshape(mu, {-1}), "each word's mean over its D features");
  show(str("sigma (", name, ")"), reshape(sigma, {-1}),
       "each word's standard deviation: sqrt(mean of (x - mu)^2 + eps)");
  const Tensor out = norm.weight * ((x - mu) / sigma) + norm.bias;
  check(str(name, " written out against nn::layer_norm (one node, hand-derived backward)"), out,
        nn::layer_norm(x, norm.weight, norm.bias, norm.eps));
  return out;
}

}  // namespace

void one_block(const Tensor& X, std::int64_t heads, bool causal, Generator& gen) {
  const std::int64_t D = X.size(1);
  nn::TransformerEncoderBlock block({.dim = D, .heads = heads, .mlp_dim = 2 * D}, gen);
  block.to(DType::Float64);
  // Random γ, β and biases, so every term of the formulas shows (a new block has γ = 1, β = 0).
  for (auto& [name, p] : block.named_parameters()) {
    if (name.ends_with("weight") && p.dim() == 2)
      nn::init::normal(p, gen, 1.0 / std::sqrt(static_cast<double>(p.size(1))));
    else
      nn::init::normal(p, gen, 0.1);
    if (name.starts_with("norm") && name.ends_with("weight")) p.copy_from(p + 1.0);
  }

  heading(str("Part 3: one pre-LN transformer block (SEEDS §5), D = ", D, ", h = ", heads,
              ", MLP width ", 2 * D, causal ? ", causal" : ""));
  std::printf("z' = MSA(LN_1(z)) + z, then z_out = MLP(LN_2(z')) + z'. The block's input z is X;\n"
              "its weights are random (an untrained block), gamma near 1 and beta near 0.\n");
  const nn::AttentionMask mask{.causal = causal};

  const Tensor ln1 = layer_norm_step("LN_1", X, *block.norm1);
  show("LN_1(z)", ln1, "= gamma_1 * (z - mu) / sigma + beta_1   every word on the same scale",
       kWords);
  const Tensor msa = squeeze(block.attn->forward(unsqueeze(ln1, 0), mask), 0);  // (N, D)
  show("MSA(LN_1(z))", msa, "multi-head self-attention, as in part 2: the only step where the "
       "words mix", kWords);
  const Tensor z1 = msa + X;
  show("z'", z1, "= MSA(LN_1(z)) + z   the residual: the block adds to its input", kWords);

  const Tensor ln2 = layer_norm_step("LN_2", z1, *block.norm2);
  const Tensor H = block.mlp->fc1->forward(ln2);  // (N, 2D)
  show("H", H, "= LN_2(z') W_1^T + b_1   the MLP's hidden layer, each word on its own (N x 2D)",
       kWords);
  const Tensor G = nn::gelu(H);
  show("GELU(H)", G, "= H * Phi(H)   (Phi: the normal CDF) a smooth ReLU", kWords);
  const Tensor mlp = block.mlp->fc2->forward(G);  // (N, D)
  show("MLP(LN_2(z'))", mlp, "= GELU(H) W_2^T + b_2   back to width D", kWords);
  const Tensor z_out = mlp + z1;
  show("z_out", z_out, "= MLP(LN_2(z')) + z'   the block's output, the next block's input",
       kWords);

  check("z_out against nn::TransformerEncoderBlock::forward", z_out,
        squeeze(block.forward(unsqueeze(X, 0), mask), 0));
}

}  // namespace uwaga::walkthrough
