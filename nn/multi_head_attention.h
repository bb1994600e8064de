#pragma once
// Multi-head attention (SEEDS §4): h heads, each attending in its own subspace,
//   head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V),   d_k = d_v = D / h
//   MultiHead(Q, K, V) = Concat(head_1, …, head_h) W_O
// The per-head projections are stored side by side as one Linear, as PyTorch models do:
//   self-attention:  qkv  = Linear(D, 3D) on x; its output splits into Q | K | V, each into heads
//   cross-attention: q    = Linear(D, D) on x (the queries' sequence),
//                    kv   = Linear(D, 2D) on the memory (keys and values' sequence)
//   both:            proj = Linear(D, D), the W_O that mixes the concatenated heads.
// Linear computes x Wᵀ + b with W stored (out, in), so in the notes' symbols (d = D/h):
//   W_i^Q = qkv.weight[i·d : (i+1)·d, :]ᵀ,  W_i^K = qkv.weight[D + i·d : D + (i+1)·d, :]ᵀ,
//   W_i^V = qkv.weight[2D + i·d : 2D + (i+1)·d, :]ᵀ,  W_O = proj.weightᵀ ∈ R^{h·d_v × D};
// and every projection adds its bias (qkv.bias, proj.bias), which the notes leave out. With
// qkv_bias false the query, key and value projections have none (CCT's qkv: Q = X W_Q exactly,
// as in the notes); proj keeps its bias.
// Cost per layer (SEEDS §7), n tokens of width D: the scores E and A V are O(n²·D), the
// projections O(n·D²). A recurrent layer costs O(n·D²) too but in n sequential steps, so
// self-attention is the cheaper one while n < D; apps/bench measures the n² growth.
//
// Two ways to compute it, chosen by MultiHeadAttentionOptions::path; they give the same numbers
// (tests/nn/test_multi_head_attention.cpp checks outputs and every gradient in float64):
//   reference  the formula step by step from primitive ops (multi_head_attention.cpp: project,
//              split into heads, E, mask, A, Y per head, Concat, W_O); autograd derives the
//              backward. Read this one.
//   fast       every head at once in the fused kernel (nn/attention_kernels.h), which reads the
//              heads in place from the projections and has a hand-derived backward. Training
//              uses this one.
// With attention dropout (attention_dropout > 0, training only; nn/attention_dropout.h) every
// head's weights are dropped before they average the values, head_i = (A_i ⊙ M_i) V_i, in both
// ways; the mask comes from attn_drop's generator (timm's name), which Model::seed_dropout
// reseeds with the model's other dropouts.
#include "core/random.h"
#include "nn/dropout.h"
#include "nn/linear.h"
#include "nn/scaled_dot_product_attention.h"

namespace uwaga::nn {

// Which of the two ways above a MultiHeadAttention computes its heads.
enum class AttentionPath { fast, reference };

struct MultiHeadAttentionOptions {
  std::int64_t dim = 0;    // D
  std::int64_t heads = 1;  // h; must divide D
  bool cross = false;      // separate q and kv projections (keys and values from a memory)
  AttentionPath path = AttentionPath::fast;
  double attention_dropout = 0.0;  // probability of dropping each weight of A; 0: off
  bool qkv_bias = true;  // qkv (or q and kv) add a bias; false: X W_Q, X W_K, X W_V alone (CCT)

  // Throws an Error naming the offending field when the options cannot work.
  void validate() const;
};

class MultiHeadAttention : public Module {
 public:
  MultiHeadAttention(const MultiHeadAttentionOptions& options, Generator& gen);

  // Self-attention: x (B, T, D) -> (B, T, D).
  Tensor forward(const Tensor& x, const AttentionMask& mask = {});
  // Cross-attention: queries from x (B, T, D), keys and values from memory (B, S, D).
  Tensor forward(const Tensor& x, const Tensor& memory, const AttentionMask& mask = {});

  // Self-attention for generation, one new token at a time after a prompt: x (B, n, D) are the
  // new tokens; K and V (B, h, t, d_k) hold the keys and values, split into heads, of the t tokens
  // before them (undefined: none yet) and grow by the new tokens' own. The prompt's tokens
  // (no earlier ones) attend causally among themselves; a later token (n = 1) attends to every
  // cached key, all of which come before it, and to itself. -> (B, n, D), the rows forward()
  // with a causal mask gives for those tokens. Generation is evaluation: no attention dropout.
  Tensor forward_cached(const Tensor& x, Tensor& K, Tensor& V);

  // With keep_attention(true) each forward keeps the per-head weights A (B, h, T, S).
  void keep_attention(bool on) { keep_attention_ = on; }
  const Tensor& attention() const { return attention_; }

  const MultiHeadAttentionOptions options;
  const std::int64_t head_dim;  // d_k = d_v = D / h
  std::shared_ptr<Linear> qkv, q, kv, proj;
  std::shared_ptr<Dropout> attn_drop;  // its generator draws M; only when attention_dropout > 0

 private:
  // AttentionPath::reference: Q (B, T, D), K and V (B, S, D), every head's side by side ->
  // Concat(head_1, …, head_h) W_O (B, T, D).
  Tensor reference_heads(const Tensor& Q, const Tensor& K, const Tensor& V,
                         const AttentionMask& mask);
  Tensor* kept() { return keep_attention_ ? &attention_ : nullptr; }
  // Attention dropout as the kernels take it: on in training when attention_dropout > 0.
  AttentionDropout weight_dropout();
  bool keep_attention_ = false;
  Tensor attention_;
};

// Splitting into heads and concatenating them back, as the reference path does:
// (B, T, h·d) -> (B, h, T, d): head i is columns i·d … (i+1)·d.
Tensor split_heads(const Tensor& x, std::int64_t heads);
// (B, h, T, d) -> (B, T, h·d): Concat(head_1, …, head_h).
Tensor merge_heads(const Tensor& heads);

}  // namespace uwaga::nn
