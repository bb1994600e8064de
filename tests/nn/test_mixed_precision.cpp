// Mixed precision (core/matmul_precision.h, `train --precision bf16`) on a whole transformer block
// and on a small GPT: with the matrix products in bfloat16 (float32 sums) and LayerNorm, softmax,
// GELU, the residual additions and the loss in float32, the loss and its gradients with respect to
// the input and to every parameter stay within bfloat16 rounding of the float32 ones — through the
// fused attention kernel and through the readable reference path alike. Without AVX512-BF16 they
// are the float32 ones, bit for bit.
//
// Tolerance. One product rounded to bfloat16 is off by about 2⁻⁸ ≈ 4e-3 of its norm
// (tests/core/test_matmul_precision.cpp); a block's gradient passes through several products
// (W_O, A·V, Q·Kᵀ, the QKV projection, the MLP's two layers, each forward and back), whose errors
// add roughly as independent ones. 3e-2 leaves room for that and catches a product gone wrong
// (a missing transpose or a dropped operand is off by order 1). The GPT's loss, a mean of
// log-probabilities, averages its rows' errors: 1e-2 of it is generous, and still far below what a
// wrong product would do. Measured on an AVX512-BF16 Xeon: the gradients at most 6e-3 off, the
// loss 2e-5.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/bf16_gemm.h"
#include "core/matmul_precision.h"
#include "core/uwaga.h"
#include "nn/cross_entropy.h"
#include "nn/gpt.h"
#include "nn/transformer_encoder_block.h"

using namespace uwaga;
using namespace uwaga::nn;

namespace {

// The gradients of L = Σ y ⊙ r, y = block(x), for x and then every parameter, under `precision`.
std::vector<Tensor> block_gradients(TransformerEncoderBlock& block, const Tensor& x0,
                                    const Tensor& r, MatmulPrecision precision) {
  const MatmulPrecisionScope scope(precision);
  for (Tensor p : block.parameters()) p.zero_grad();
  Tensor x = x0.clone().requires_grad_();
  sum(block.forward(x) * r).backward();
  std::vector<Tensor> grads = {x.grad()};
  for (const Tensor& p : block.parameters()) grads.push_back(p.grad());
  return grads;
}

double gradient_relative_error(const Tensor& a, const Tensor& b) {
  double diff = 0, norm = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    diff += (a.flat(i) - b.flat(i)) * (a.flat(i) - b.flat(i));
    norm += b.flat(i) * b.flat(i);
  }
  return std::sqrt(diff / norm);
}

// The GPT's cross-entropy for next tokens `targets` (B, T) and then its gradients, parameter by
// parameter, under `precision`.
struct GptLossAndGradients {
  double loss = 0;
  std::vector<Tensor> grads;
};

GptLossAndGradients gpt_loss_and_gradients(Gpt& gpt, const Tensor& ids, const Tensor& targets,
                                           MatmulPrecision precision) {
  const MatmulPrecisionScope scope(precision);
  for (Tensor p : gpt.parameters()) p.zero_grad();
  const Tensor logits = gpt.forward(ids);  // (B, T, V)
  const std::int64_t rows = ids.size(0) * ids.size(1);
  Tensor loss = cross_entropy(reshape(logits, {rows, logits.size(2)}), reshape(targets, {rows}));
  loss.backward();
  GptLossAndGradients result{loss.flat(0), {}};
  for (const Tensor& p : gpt.parameters()) result.grads.push_back(p.grad());
  return result;
}

Tensor random_tokens(std::int64_t B, std::int64_t T, std::int64_t vocab, Generator& gen) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(B * T));
  for (auto& id : ids) id = static_cast<std::int64_t>(gen.below(static_cast<std::uint64_t>(vocab)));
  return Tensor::from_indices(ids, {B, T});
}

}  // namespace

TEST_CASE("mixed precision: a transformer block's gradients in bf16 within bfloat16 rounding of "
          "float32's", "[nn][block][bf16]") {
  const bool bf16_here = std::string(bf16_gemm_path()) != "float32";
  for (const AttentionPath path : {AttentionPath::fast, AttentionPath::reference}) {
    Generator gen(7);
    TransformerEncoderBlock block({.dim = 64, .heads = 4, .mlp_dim = 128, .attention = path},
                                  gen);
    const Tensor x = Tensor::randn({4, 17, 64}, gen), r = Tensor::randn({4, 17, 64}, gen);
    const std::vector<Tensor> fp32 = block_gradients(block, x, r, MatmulPrecision::float32);
    const std::vector<Tensor> bf16 = block_gradients(block, x, r, MatmulPrecision::bfloat16);
    const auto named = block.named_parameters();
    REQUIRE(fp32.size() == named.size() + 1);
    double largest = 0;
    for (std::size_t i = 0; i < fp32.size(); ++i) {
      const std::string name = i == 0 ? "x" : named[i - 1].first;
      const double error = gradient_relative_error(bf16[i], fp32[i]);
      largest = std::max(largest, error);
      INFO((path == AttentionPath::fast ? "fast" : "reference")
           << " attention, d" << name << ": relative error " << error << " against float32");
      if (bf16_here) REQUIRE(error < 3e-2);
      else REQUIRE(error == 0);
    }
    if (bf16_here) REQUIRE(largest > 0);  // the products did run in bfloat16
  }
}

TEST_CASE("mixed precision: a small GPT's loss and gradients in bf16 within bfloat16 rounding of "
          "float32's", "[nn][gpt][bf16]") {
  const bool bf16_here = std::string(bf16_gemm_path()) != "float32";
  for (const AttentionPath path : {AttentionPath::fast, AttentionPath::reference}) {
    Generator gen(11);
    GptConfig config;  // every product of a training step: QKV, Q·Kᵀ, A·V, W_O, MLP, tied head
    config.vocab = 40, config.context = 16, config.dim = 64, config.layers = 2, config.heads = 4;
    config.mlp_dim = 128, config.tie_weights = true, config.attention = path;
    Gpt gpt(config, gen);
    const Tensor ids = random_tokens(4, 16, config.vocab, gen),
                 targets = random_tokens(4, 16, config.vocab, gen);
    const GptLossAndGradients fp32 = gpt_loss_and_gradients(gpt, ids, targets,
                                                             MatmulPrecision::float32);
    const GptLossAndGradients bf16 = gpt_loss_and_gradients(gpt, ids, targets,
                                                            MatmulPrecision::bfloat16);
    const char* path_name = path == AttentionPath::fast ? "fast" : "reference";
    const double loss_error = std::abs(bf16.loss - fp32.loss) / std::abs(fp32.loss);
    INFO(path_name << " attention: loss " << bf16.loss << " in bf16, " << fp32.loss
                   << " in float32, relative error " << loss_error);
    if (bf16_here) REQUIRE(loss_error < 1e-2);
    else REQUIRE(loss_error == 0);
    const auto named = gpt.named_parameters();
    REQUIRE(fp32.grads.size() == named.size());
    double largest = 0;
    for (std::size_t i = 0; i < named.size(); ++i) {
      const double error = gradient_relative_error(bf16.grads[i], fp32.grads[i]);
      largest = std::max(largest, error);
      INFO(path_name << " attention, d" << named[i].first << ": relative error " << error
                     << " against float32");
      if (bf16_here) REQUIRE(error < 3e-2);
      else REQUIRE(error == 0);
    }
    if (bf16_here) REQUIRE(largest > 0);  // the products did run in bfloat16
  }
}
