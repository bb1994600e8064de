#pragma once
// The C++ exercises: the functions a student writes, declared once. exercises.cpp holds the stubs
// to fill in; solutions.cpp one way to write them; check_exercises.cpp the checks, which compare
// each with uwaga's own version (output, every input's gradient, gradcheck) and say what is wrong.
//   cmake --build build --target uwaga-exercises && ./build/notebooks/exercises/cpp/uwaga-exercises
// The Python track is notebooks/08_exercises.ipynb; the two share their exercises.
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "nn/transformer_encoder_block.h"
#include "nn/vision_transformer.h"
#include "optim/optimizer.h"

namespace uwaga::exercises {

// What a stub throws until it is written; the checks report it as "not implemented yet".
struct NotImplemented : Error {
  explicit NotImplemented(const std::string& what) : Error(what + ": not implemented yet") {}
};

// 1. A = softmax(E) along the last dim, from exp, max, sum and division (SEEDS §2).
Tensor softmax(const Tensor& E);

// 2. softmax's backward by hand: given A = softmax(E) and dA = ∂L/∂A (same shape), return dE.
Tensor softmax_backward(const Tensor& A, const Tensor& dA);

// 3. Y = softmax(Q Kᵀ / √d_k) V; Q (…, T, d_k), K (…, S, d_k), V (…, S, d_v) (SEEDS §2–3).
Tensor attention(const Tensor& Q, const Tensor& K, const Tensor& V);

// 4. The same, query i seeing keys j ≤ i only: −∞ above the diagonal of the scores (SEEDS §5).
Tensor causal_attention(const Tensor& Q, const Tensor& K, const Tensor& V);

// 5. LayerNorm's backward by hand, over the last dim of x (rows × d), ε = 1e-5 (SEEDS §5).
struct LayerNormGrads {
  Tensor dx;      // like x
  Tensor dgamma;  // (d)
  Tensor dbeta;   // (d)
};
LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& gamma, const Tensor& dy);

// 6. Multi-head attention's reshapes (SEEDS §4): (B, T, h·d) -> (B, h, T, d), and back.
Tensor split_heads(const Tensor& x, std::int64_t heads);
Tensor merge_heads(const Tensor& y);

// 7. One pre-LN block from its parts: z′ = MSA(LN₁(z)) + z, z_out = MLP(LN₂(z′)) + z′ (SEEDS §5).
Tensor block_forward(const Tensor& z, nn::TransformerEncoderBlock& block);

// 8. The ViT's patches (SEEDS §6): (B, C, H, W) -> (B, N, P·P·C), raster order, channels innermost.
Tensor patchify(const Tensor& images, std::int64_t P);

// 9. One training step without the Trainer: forward, cross-entropy, backward, step, zero_grad.
//    Returns the loss.
double train_step(nn::VisionTransformer& model, optim::Optimizer& optimizer, const Tensor& images,
                  const Tensor& labels);

// 10. Sampling the next token from logits z: greedy (the largest; the lowest index on a tie), and
//     the probabilities top-k sampling with temperature τ draws from (p_i ∝ exp(z_i/τ) over the k
//     largest, 0 elsewhere).
std::int64_t greedy(const std::vector<double>& logits);
std::vector<double> top_k_probabilities(const std::vector<double>& logits, std::int64_t k,
                                        double temperature);

// 11. Cross-entropy's backward by hand: L = mean over the n rows of −log softmax(z_r)[t_r];
//     return ∂L/∂z (n, V). targets: int64 (n).
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets);

// 12. Attention's backward by hand (apps/walkthrough/attention_backward.cpp writes it out for one
//     layer): with E = Q Kᵀ/√d_k, A = softmax(E), Y = A V for Q (…, T, d_k), K (…, S, d_k),
//     V (…, S, d_v), and dY = ∂L/∂Y (…, T, d_v), return every gradient back to Q and K.
struct AttentionGrads {
  Tensor dA;  // (…, T, S)
  Tensor dV;  // (…, S, d_v)
  Tensor dE;  // (…, T, S)
  Tensor dQ;  // (…, T, d_k)
  Tensor dK;  // (…, S, d_k)
};
AttentionGrads attention_backward(const Tensor& Q, const Tensor& K, const Tensor& V,
                                  const Tensor& dY);

}  // namespace uwaga::exercises
