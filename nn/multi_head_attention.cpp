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
}

std::vector<Tensor> split_heads(const Tensor& projected, std::int64_t n, std::int64_t heads) {
  check_defined(projected, "split_heads");
  if (n < 1 || heads < 1) fail("split_heads: n ", n, " and heads ", heads, " must be positive");
  if (projected.dim() != 3 || projected.size(2) % (n * heads) != 0)
    fail("split_heads: expects (B, T, n·h·d) with n = ", n, " and h = ", heads, ", got ",
         shape_str(projected.shape()));
  const std::int64_t B = projected.size(0), T = projected.size(1);
  const std::int64_t d = projected.size(2) / (n * heads);
  // (B, T, n·h·d) -> (B, T, n, h, d) -> (n, B, h, T, d)
  Tensor parts = permute(reshape(projected, {B, T, n, heads, d}), {2, 0, 3, 1, 4});
  std::vector<Tensor> out;
  for (std::int64_t i = 0; i < n; ++i) out.push_back(squeeze(slice(parts, 0, i, i + 1), 0));
  return out;
}

Tensor merge_heads(const Tensor& heads) {
  check_defined(heads, "merge_heads");
  if (heads.dim() != 4) fail("merge_heads: expects (B, h, T, d), got ", shape_str(heads.shape()));
  const std::int64_t B = heads.size(0), h = heads.size(1), T = heads.size(2), d = heads.size(3);
  return reshape(permute(heads, {0, 2, 1, 3}), {B, T, h * d});
}

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionOptions& o, Generator& gen)
    : options(o), head_dim(checked_head_dim(o)) {
  const std::int64_t D = o.dim;
  if (o.cross) {
    q = register_module("q", std::make_shared<Linear>(LinearOptions{.in = D, .out = D}, gen));
    kv = register_module("kv",
                         std::make_shared<Linear>(LinearOptions{.in = D, .out = 2 * D}, gen));
  } else {
    qkv = register_module("qkv",
                          std::make_shared<Linear>(LinearOptions{.in = D, .out = 3 * D}, gen));
  }
  proj = register_module("proj", std::make_shared<Linear>(LinearOptions{.in = D, .out = D}, gen));
}

Tensor MultiHeadAttention::forward(const Tensor& x, const AttentionMask& mask) {
  if (options.cross)
    fail("MultiHeadAttention: this layer is cross-attention; call forward(x, memory, mask)");
  check_input(x, options.dim, "input");
  // Every head at once, read in place from x W_QKVᵀ + b_QKV: head_i = softmax(Q_i K_iᵀ/√d_k) V_i, side by
  // side as Concat(head_1, …, head_h); then the output projection W_O.
  Tensor heads = attention_heads(qkv->forward(x), options.heads, mask, kept());
  return proj->forward(heads);
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
  Tensor heads = attention_heads(q->forward(x), kv->forward(memory), options.heads, mask, kept());
  return proj->forward(heads);
}

}  // namespace uwaga::nn
