#pragma once
// The steps of one attention layer (SEEDS §2–3), each a function of its own so that a debugger
// can break on it, and the parts of uwaga-walkthrough that print them.
#include <cstdint>

#include "core/random.h"
#include "core/tensor.h"

namespace uwaga::walkthrough {

struct AttentionSteps {
  Tensor Q, K, V;  // (N, d_k), (N, d_k), (N, d_v)
  Tensor E;        // (N, N) alignment scores (−∞ where the causal mask hides a key)
  Tensor A;        // (N, N) attention weights, rows sum to 1
  Tensor Y;        // (N, d_v) outputs
};

// Q = X W_Q, K = X W_K, V = X W_V
void queries_keys_values(AttentionSteps& s, const Tensor& X, const Tensor& W_Q,
                         const Tensor& W_K, const Tensor& W_V);
// E = Q Kᵀ / √d_k
void alignment_scores(AttentionSteps& s);
// E_ij = −∞ for j > i: word i may not look at the words after it
void causal_mask(AttentionSteps& s);
// A = softmax(E), along each row
void attention_weights(AttentionSteps& s);
// Y = A V
void attention_output(AttentionSteps& s);

// The parts of the walkthrough, in the order they run. X is (N, D), float64.
void one_attention_layer(const Tensor& X, std::int64_t d_k, bool causal, Generator& gen);
void one_multi_head_layer(const Tensor& X, std::int64_t heads, bool causal, Generator& gen);
void one_block(const Tensor& X, std::int64_t heads, bool causal, Generator& gen);
void attention_backward(const Tensor& X, std::int64_t d_k, bool causal, Generator& gen);
void plain_training_step(Generator& gen);

}  // namespace uwaga::walkthrough
