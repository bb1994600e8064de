// Parts 1 and 2 of uwaga-walkthrough: one self-attention layer step by step, then multi-head
// attention head by head, each checked against the nn/ module that computes it in one call.
#include "apps/walkthrough/attention_steps.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "apps/walkthrough/walkthrough_print.h"
#include "core/elementwise.h"
#include "core/matmul.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "nn/init.h"
#include "nn/multi_head_attention.h"
#include "nn/self_attention.h"
#include "nn/softmax.h"

namespace uwaga::walkthrough {

using nn::AttentionPath;

void queries_keys_values(AttentionSteps& s, const Tensor& X, const Tensor& W_Q,
                         const Tensor& W_K, const Tensor& W_V) {
  s.Q = matmul(X, W_Q);  // (N, d_k)
  s.K = matmul(X, W_K);  // (N, d_k)
  s.V = matmul(X, W_V);  // (N, d_v)
}

// E_ij = ⟨Q_i, K_j⟩ / √d_k, how well query i matches key j
void alignment_scores(AttentionSteps& s) {
  const double d_k = static_cast<double>(s.Q.size(1));
  s.E = matmul(s.Q, transpose(s.K, 0, 1)) / std::sqrt(d_k);  // (N, N)
}

// exp(−∞) = 0, so after the softmax a hidden key gets weight exactly 0 and the other weights of
// the row share the whole 1 among themselves.
void causal_mask(AttentionSteps& s) {
  const std::int64_t N = s.E.size(0);
  Tensor future = Tensor::zeros({N, N}, s.E.dtype());  // 1 above the diagonal
  for (std::int64_t i = 0; i < N; ++i)
    for (std::int64_t j = i + 1; j < N; ++j) future.set({i, j}, 1.0);
  s.E = masked_fill(s.E, future, -std::numeric_limits<double>::infinity());
}

void attention_weights(AttentionSteps& s) { s.A = nn::softmax(s.E, 1); }

// Each output row is a weighted average of the value rows.
void attention_output(AttentionSteps& s) { s.Y = matmul(s.A, s.V); }

// ---- part 1: one attention layer (SEEDS §2–3) ---------------------------------------------------

void one_attention_layer(const Tensor& X, std::int64_t d_k, bool causal, Generator& gen) {
  const std::int64_t D = X.size(1);
  nn::SelfAttention layer({.d_x = D, .d_k = d_k, .d_v = d_k}, gen);
  layer.to(DType::Float64);
  // The module starts from trunc-normal(0, 0.02), which makes every score nearly 0 and every
  // weight nearly 1/N; weights of size 1/√D give scores of order 1 and a sharper picture.
  for (Tensor* w : {&layer.W_Q, &layer.W_K, &layer.W_V})
    nn::init::normal(*w, gen, 1.0 / std::sqrt(static_cast<double>(D)));

  heading(str("Part 1: one self-attention layer (SEEDS §3), N = 4 words, D_X = ", D,
              ", d_k = d_v = ", d_k, causal ? ", causal" : ""));
  show("W_Q", layer.W_Q, "projection to queries (D_X x d_k), random: an untrained layer");
  show("W_K", layer.W_K, "projection to keys (D_X x d_k)");
  show("W_V", layer.W_V, "projection to values (D_X x d_v)");

  AttentionSteps s;
  queries_keys_values(s, X, layer.W_Q, layer.W_K, layer.W_V);
  show("Q", s.Q, "= X W_Q   queries: what each word is looking for", kWords);
  show("K", s.K, "= X W_K   keys: what each word offers to be found by", kWords);
  show("V", s.V, "= X W_V   values: what each word passes on", kWords);

  alignment_scores(s);
  show("E", s.E, "= Q K^T / sqrt(d_k)   alignment scores, row = query word, column = key word",
       kWords, kWords);
  if (causal) {
    causal_mask(s);
    show("E", s.E, "with the causal mask: -inf where the key comes after the query (SEEDS §5, "
         "masked self-attention)", kWords, kWords);
  }

  attention_weights(s);
  show("A", s.A, "= softmax(E) along each row   attention weights", kWords, kWords);
  const Tensor row_sums = sum(s.A, {1});
  std::printf("row sums of A:");
  for (std::int64_t i = 0; i < row_sums.numel(); ++i) std::printf(" %.6f", row_sums.flat(i));
  std::printf("   (each row is a probability distribution over the words)\n");
  if (causal)
    std::printf("With the mask, \"we\" can only look at itself (its row is 1, 0, 0, 0) and the\n"
                "upper triangle of A is 0: no word sees the words after it, as a decoder that\n"
                "writes one word at a time must not.\n");

  attention_output(s);
  show("Y", s.Y, "= A V   each row a weighted average of the rows of V", kWords);

  Tensor A_module;
  check("Y against nn::SelfAttention::forward(X)", s.Y,
        layer.forward(X, {.causal = causal}, &A_module));
  check("A against the weights the module returns", s.A, A_module);
}

// ---- part 2: multi-head attention (SEEDS §4) ----------------------------------------------------

namespace {
// Head i's columns of a projection P (N, n·D) laid out as [Q | K | V], each [head_1 | … | head_h].
Tensor head_columns(const Tensor& P, std::int64_t part, std::int64_t i, std::int64_t D,
                    std::int64_t d) {
  const std::int64_t start = part * D + i * d;
  return slice(P, 1, start, start + d);  // (N, d)
}
}  // namespace

void one_multi_head_layer(const Tensor& X, std::int64_t heads, bool causal, Generator& gen) {
  const std::int64_t D = X.size(1);
  nn::MultiHeadAttention mha({.dim = D, .heads = heads, .path = AttentionPath::reference}, gen);
  mha.to(DType::Float64);
  for (Tensor* w : {&mha.qkv->weight, &mha.proj->weight})
    nn::init::normal(*w, gen, 1.0 / std::sqrt(static_cast<double>(D)));
  const std::int64_t d = mha.head_dim;

  heading(str("Part 2: multi-head attention (SEEDS §4), h = ", heads, " heads, D = ", D,
              ", d_k = d_v = D/h = ", d, causal ? ", causal" : ""));
  std::printf("The per-head W_i^Q, W_i^K, W_i^V are stored side by side in one Linear, qkv\n"
              "(D -> 3D), so one product gives every head's queries, keys and values:\n"
              "  X qkv.weight^T + qkv.bias = [X W_1^Q | ... | X W_h^Q | X W_1^K | ... | X W_h^V]"
              "  (N x 3D; the biases start at 0)\n");
  const Tensor P = mha.qkv->forward(X);  // (N, 3D)

  std::vector<Tensor> outputs;
  for (std::int64_t i = 0; i < heads; ++i) {
    const std::string n = std::to_string(i + 1);
    heading(str("head ", n, " = Attention(X W_", n, "^Q, X W_", n, "^K, X W_", n, "^V)"));
    AttentionSteps s;
    s.Q = head_columns(P, 0, i, D, d);
    s.K = head_columns(P, 1, i, D, d);
    s.V = head_columns(P, 2, i, D, d);
    show(str("Q_", n), s.Q, str("= X W_", n, "^Q"), kWords);
    show(str("K_", n), s.K, str("= X W_", n, "^K"), kWords);
    show(str("V_", n), s.V, str("= X W_", n, "^V"), kWords);
    alignment_scores(s);
    if (causal) causal_mask(s);
    show(str("E_", n), s.E, str("= Q_", n, " K_", n, "^T / sqrt(d_k)", causal ? ", masked" : ""),
         kWords, kWords);
    attention_weights(s);
    show(str("A_", n), s.A, str("= softmax(E_", n, ")   this head's own pattern"), kWords, kWords);
    attention_output(s);
    show(str("head_", n), s.Y, str("= A_", n, " V_", n), kWords);
    outputs.push_back(s.Y);
  }

  heading("MultiHead(X) = Concat(head_1, ..., head_h) W_O");
  const Tensor concat = cat(outputs, 1);  // (N, h·d_v)
  show("Concat", concat, "the heads side by side (N x h*d_v)", kWords);
  show("W_O", transpose(mha.proj->weight, 0, 1), "mixes the heads (h*d_v x D), stored "
       "transposed in the Linear proj");
  const Tensor Y = mha.proj->forward(concat);  // (N, D)
  show("Y", Y, "= Concat W_O (+ proj.bias, 0 here)   one output row per word, width D", kWords);

  // The module takes a batch (B, N, D): here B = 1.
  const Tensor X_batch = unsqueeze(X, 0);
  const nn::AttentionMask mask{.causal = causal};
  check("Y against nn::MultiHeadAttention's reference path (split_heads, attention, merge_heads, "
        "W_O)", Y, squeeze(mha.forward(X_batch, mask), 0));
  Generator unused(0);  // its draws are overwritten by load_state_dict
  nn::MultiHeadAttention fast({.dim = D, .heads = heads, .path = AttentionPath::fast}, unused);
  fast.to(DType::Float64);
  fast.load_state_dict(mha.state_dict());
  check("Y against its fast path (attention_heads: every head at once, in place)", Y,
        squeeze(fast.forward(X_batch, mask), 0));
}

}  // namespace uwaga::walkthrough
