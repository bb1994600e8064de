#include "nn/scaled_dot_product_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/elementwise.h"
#include "core/matmul.h"
#include "core/shape_ops.h"
#include "nn/attention_kernels.h"
#include "nn/softmax.h"

namespace uwaga::nn {
namespace {

AttentionDims check_attention_args(const Tensor& Q, const Tensor& K, const Tensor& V,
                                   const AttentionMask& mask, const char* op) {
  check_float(Q, op);
  check_float(K, op);
  check_float(V, op);
  check_same_dtype(Q, K, op);
  check_same_dtype(Q, V, op);
  auto shapes = [&] {
    return "Q " + shape_str(Q.shape()) + ", K " + shape_str(K.shape()) + ", V " +
           shape_str(V.shape());
  };
  if (Q.dim() < 2 || K.dim() != Q.dim() || V.dim() != Q.dim())
    fail(op, ": ", shapes(), ": expected Q (..., T, d_k), K (..., S, d_k), V (..., S, d_v) with "
         "the same number of dims");
  Shape lead(Q.shape().begin(), Q.shape().end() - 2);
  if (Shape(K.shape().begin(), K.shape().end() - 2) != lead ||
      Shape(V.shape().begin(), V.shape().end() - 2) != lead)
    fail(op, ": ", shapes(), ": leading (batch, head) dims differ");
  if (K.size(-1) != Q.size(-1))
    fail(op, ": ", shapes(), ": queries and keys must have the same width d_k (", Q.size(-1),
         " vs ", K.size(-1), ")");
  if (V.size(-2) != K.size(-2))
    fail(op, ": ", shapes(), ": keys and values must be as many (", K.size(-2), " vs ",
         V.size(-2), ")");
  AttentionDims d{numel(lead), Q.size(-2), K.size(-2), Q.size(-1), V.size(-1), 1};
  if (mask.key_padding.defined()) {
    const Tensor& kp = mask.key_padding;
    if (kp.dim() != 2 || kp.size(1) != d.S || lead.empty() || kp.size(0) != lead[0])
      fail(op, ": key padding mask ", shape_str(kp.shape()), " does not fit ", shapes(),
           ": expected (", lead.empty() ? 1 : lead[0], ", ", d.S, ")");
    d.B = kp.size(0);
  }
  return d;
}

// 1 for each query row i (of batch element b) whose keys are all masked, 0 otherwise, shaped
// (B, 1, …, 1, T, 1) with `rank` dims (B = 1 without a padding mask) to broadcast against E.
// With the causal mask row i sees keys j ≤ i; padding removes keys from every row.
Tensor rows_without_keys(const AttentionMask& mask, const AttentionDims& d, std::int64_t rank,
                         DType dtype) {
  const Tensor& pad = mask.key_padding;  // (B, S) or undefined
  Shape shape(static_cast<std::size_t>(rank), 1);
  shape.front() = d.B;
  shape[shape.size() - 2] = d.T;
  Tensor out = Tensor::zeros(shape, dtype);
  for (std::int64_t b = 0; b < d.B; ++b)
    for (std::int64_t i = 0; i < d.T; ++i) {
      const std::int64_t end = mask.causal ? std::min(d.S, i + 1) : d.S;
      bool has_key = false;
      for (std::int64_t j = 0; j < end && !has_key; ++j)
        has_key = !pad.defined() || pad.flat(b * d.S + j) == 0;
      if (!has_key) out.set_flat(b * d.T + i, 1);
    }
  return out;
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& Q, const Tensor& K, const Tensor& V,
                                    const AttentionMask& mask, Tensor* weights) {
  const char* op = "scaled_dot_product_attention";
  const AttentionDims d = check_attention_args(Q, K, V, mask, op);
  // Q, K, V, Y each one (rows × width) matrix after the other.
  const AttentionLayouts l{
      OperandLayout::contiguous(d.T, d.dk), OperandLayout::contiguous(d.S, d.dk),
      OperandLayout::contiguous(d.S, d.dv), OperandLayout::contiguous(d.T, d.dv)};
  Shape y_shape = Q.shape(), a_shape = Q.shape();
  y_shape.back() = d.dv;
  a_shape.back() = d.S;
  return fused_attention(op, d, l, mask, {Q, K, V}, {0, 1, 2}, y_shape, a_shape, weights);
}

Tensor scaled_dot_product_attention_composed(const Tensor& Q, const Tensor& K, const Tensor& V,
                                             const AttentionMask& mask, Tensor* weights) {
  const AttentionDims d =
      check_attention_args(Q, K, V, mask, "scaled_dot_product_attention_composed");
  const double minus_infinity = -std::numeric_limits<double>::infinity();
  // E = Q Kᵀ / √d_k, the alignment scores (SEEDS §2)
  Tensor E = matmul(Q, transpose(K, -2, -1)) / std::sqrt(static_cast<double>(d.dk));  // (..., T, S)
  // Masked keys score −∞, so the softmax gives them exp(−∞) = 0: the future words of a decoder's
  // masked self-attention (SEEDS §5), and padding.
  if (mask.causal) {
    Tensor future = Tensor::zeros({d.T, d.S}, Q.dtype());  // 1 where j > i
    for (std::int64_t i = 0; i < d.T; ++i)
      for (std::int64_t j = i + 1; j < d.S; ++j) future.set({i, j}, 1);
    E = masked_fill(E, future, minus_infinity);
  }
  if (mask.key_padding.defined()) {
    Shape s(static_cast<std::size_t>(Q.dim()), 1);  // (B, 1, ..., 1, S)
    s.front() = d.B;
    s.back() = d.S;
    E = masked_fill(E, reshape(mask.key_padding, s), minus_infinity);
  }
  // A = softmax(E) along each row, the attention weights (SEEDS §2)
  Tensor A;  // (..., T, S)
  if (mask.empty()) {
    A = softmax_composed(E, -1);
  } else {
    // A query row whose keys are all masked would be softmax(−∞, …, −∞) = 0/0 = NaN. As in the
    // fused op it gets A = 0 (so Y = 0 and no gradient): its scores are reset to 0 so the
    // softmax stays finite, then the row is multiplied by has_key = 0. Rows with a key are
    // untouched (has_key = 1).
    Tensor no_key = rows_without_keys(mask, d, Q.dim(), Q.dtype());  // (B or 1, 1, …, T, 1)
    E = masked_fill(E, no_key, 0.0);
    A = softmax_composed(E, -1) * (1.0 - no_key);
  }
  if (weights) *weights = A.detach();
  // Y = A V: each output row a weighted average of the value rows (SEEDS §2)
  return matmul(A, V);  // (..., T, d_v)
}

}  // namespace uwaga::nn
