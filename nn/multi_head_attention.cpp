#include "nn/multi_head_attention.h"

#include "core/shape_ops.h"
#include "nn/attention_kernels.h"

namespace uwaga::nn {
namespace {

std::int64_t checked_head_dim(const MultiHeadAttentionOptions& o) {
  o.validate();
  return o.dim / o.heads;
}

void check_input(const Tensor& x, std::int64_t dim, const char* what) {
  check_defined(x, "MultiHeadAttention");
  if (x.dim() != 3 || x.size(2) != dim)
    fail("MultiHeadAttention: ", what, " has shape ", shape_str(x.shape()), ", expected (B, T, ",
         dim, ")");
}

}  // namespace

void MultiHeadAttentionOptions::validate() const {
  if (dim < 1) fail("MultiHeadAttentionOptions: dim must be positive, got ", dim);
  if (heads < 1) fail("MultiHeadAttentionOptions: heads must be positive, got ", heads);
  if (dim % heads != 0)
    fail("MultiHeadAttentionOptions: dim ", dim, " is not divisible by heads ", heads);
  if (!(attention_dropout >= 0 && attention_dropout < 1))
    fail("MultiHeadAttentionOptions: attention_dropout must be in [0, 1), got ", attention_dropout);
}

Tensor split_heads(const Tensor& x, std::int64_t heads) {
  check_defined(x, "split_heads");
  if (heads < 1) fail("split_heads: heads must be positive, got ", heads);
  if (x.dim() != 3 || x.size(2) % heads != 0)
    fail("split_heads: expects (B, T, h·d) with h = ", heads, ", got ", shape_str(x.shape()));
  const std::int64_t B = x.size(0), T = x.size(1), d = x.size(2) / heads;
  // (B, T, h·d) -> (B, T, h, d) -> (B, h, T, d)
  return permute(reshape(x, {B, T, heads, d}), {0, 2, 1, 3});
}

Tensor merge_heads(const Tensor& heads) {
  check_defined(heads, "merge_heads");
  if (heads.dim() != 4) fail("merge_heads: expects (B, h, T, d), got ", shape_str(heads.shape()));
  const std::int64_t B = heads.size(0), h = heads.size(1), T = heads.size(2), d = heads.size(3);
  // (B, h, T, d) -> (B, T, h, d) -> (B, T, h·d)
  return reshape(permute(heads, {0, 2, 1, 3}), {B, T, h * d});
}

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionOptions& o, Generator& gen)
    : options(o), head_dim(checked_head_dim(o)) {
  const std::int64_t D = o.dim;
  const bool b = o.qkv_bias;
  if (o.cross) {
    q = register_module(
        "q", std::make_shared<Linear>(LinearOptions{.in = D, .out = D, .bias = b}, gen));
    kv = register_module(
        "kv", std::make_shared<Linear>(LinearOptions{.in = D, .out = 2 * D, .bias = b}, gen));
  } else {
    qkv = register_module(
        "qkv", std::make_shared<Linear>(LinearOptions{.in = D, .out = 3 * D, .bias = b}, gen));
  }
  proj = register_module("proj", std::make_shared<Linear>(LinearOptions{.in = D, .out = D}, gen));
  // No parameters and no draw from `gen`: the weights are those of a model without it.
  if (o.attention_dropout > 0)
    attn_drop = register_module("attn_drop", std::make_shared<Dropout>(o.attention_dropout));
}

AttentionDropout MultiHeadAttention::weight_dropout() {
  if (!attn_drop || !is_training()) return {};
  return {.p = attn_drop->p(), .gen = &attn_drop->generator()};
}

Tensor MultiHeadAttention::forward(const Tensor& x, const AttentionMask& mask) {
  if (options.cross)
    fail("MultiHeadAttention: this layer is cross-attention; call forward(x, memory, mask)");
  check_input(x, options.dim, "input");
  // [Q | K | V] = X [W_Q | W_K | W_V] + b (no b without qkv_bias): every head's queries, keys and values in one product
  // (SEEDS §3), (B, T, 3D).
  Tensor QKV = qkv->forward(x);
  if (options.path == AttentionPath::reference) {
    std::vector<Tensor> parts = chunk(QKV, 3, -1);  // Q, K, V, each (B, T, D)
    return reference_heads(parts[0], parts[1], parts[2], mask);
  }
  // Every head at once, read in place from QKV: head_i = softmax(Q_i K_iᵀ/√d_k + mask) V_i, side
  // by side as Concat(head_1, …, head_h); then the output projection W_O.
  Tensor heads = attention_heads(QKV, options.heads, mask, kept(), weight_dropout());
  return proj->forward(heads);
}

Tensor MultiHeadAttention::forward_cached(const Tensor& x, Tensor& K, Tensor& V) {
  if (options.cross) fail("MultiHeadAttention::forward_cached: this layer is cross-attention");
  check_input(x, options.dim, "input");
  const bool first = !K.defined();
  if (!first && x.size(1) != 1)
    fail("MultiHeadAttention::forward_cached: after the first call, one token at a time (got ",
         x.size(1), ")");
  const std::int64_t D = options.dim, h = options.heads;
  std::vector<Tensor> QKV = split(qkv->forward(x), D, 2);                   // (B, n, D) ×3
  Tensor Q = split_heads(QKV[0], h);                                         // (B, h, n, d_k)
  K = first ? split_heads(QKV[1], h) : cat({K, split_heads(QKV[1], h)}, 2);  // (B, h, t + n, d_k)
  V = first ? split_heads(QKV[2], h) : cat({V, split_heads(QKV[2], h)}, 2);  // (B, h, t + n, d_v)
  Tensor Y = scaled_dot_product_attention(Q, K, V, AttentionMask{.causal = first});  // (B, h, n, d_v)
  return proj->forward(merge_heads(Y));                                      // (B, n, D)
}

Tensor MultiHeadAttention::forward(const Tensor& x, const Tensor& memory,
                                   const AttentionMask& mask) {
  if (!options.cross)
    fail("MultiHeadAttention: this layer is self-attention; call forward(x, mask)");
  check_input(x, options.dim, "query input");
  check_input(memory, options.dim, "memory");
  if (memory.size(0) != x.size(0))
    fail("MultiHeadAttention: query input ", shape_str(x.shape()), " and memory ",
         shape_str(memory.shape()), " have different batch sizes");
  if (options.path == AttentionPath::reference) {
    // Cross-attention (SEEDS §3): Q = X W_Q from the queries' sequence X, [K | V] = X′ [W_K | W_V]
    // from the memory X′.
    Tensor Q = q->forward(x);                                     // (B, T, D)
    std::vector<Tensor> parts = chunk(kv->forward(memory), 2, -1);  // K, V, each (B, S, D)
    return reference_heads(Q, parts[0], parts[1], mask);
  }
  Tensor heads = attention_heads(q->forward(x), kv->forward(memory), options.heads, mask, kept(),
                                 weight_dropout());
  return proj->forward(heads);
}

// The formula of SEEDS §4 step by step, from primitive ops.
Tensor MultiHeadAttention::reference_heads(const Tensor& Q, const Tensor& K, const Tensor& V,
                                           const AttentionMask& mask) {
  // Split into heads: head i's queries Q W_i^Q are columns i·d … (i+1)·d of Q, its keys and
  // values likewise of K and V. The heads become a batch dim, so one call attends with all.
  Tensor Q_heads = split_heads(Q, options.heads);  // (B, h, T, d_k)
  Tensor K_heads = split_heads(K, options.heads);  // (B, h, S, d_k)
  Tensor V_heads = split_heads(V, options.heads);  // (B, h, S, d_v)
  // head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V) for i = 1…h, each on its own (SEEDS §4):
  //   E = Q_i K_iᵀ / √d_k,  masked keys −∞,  A = softmax(E) by rows,  head_i = A V_i  (SEEDS §2)
  //   (with attention dropout, in training: head_i = (A ⊙ M) V_i)
  Tensor heads = scaled_dot_product_attention_composed(Q_heads, K_heads, V_heads, mask, kept(),
                                                       weight_dropout());
  // MultiHead = Concat(head_1, …, head_h) W_O  (SEEDS §4)
  Tensor concat = merge_heads(heads);  // (B, T, h·d_v)
  return proj->forward(concat);        // (B, T, D)
}

}  // namespace uwaga::nn
