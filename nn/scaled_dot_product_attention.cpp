#include "nn/scaled_dot_product_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/elementwise.h"
#include "core/matmul.h"
#include "core/shape_ops.h"
#include "nn/attention_kernels.h"
#include "nn/dropout.h"
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

// ---- the plain loops (llm.c's attention_forward and attention_backward) -------------------------
//
// One (T × S) problem, one query row after the other, as the notes write it (SEEDS §3):
//   e_ij = q_i · k_j / √d_k,   a_ij = exp(e_ij − m_i) / Σ_j exp(e_ij − m_i),   y_i = Σ_j a_ij v_j
// with m_i = max_j e_ij (subtracting it changes nothing but keeps exp from overflowing).
// scaled_dot_product_attention runs the fast kernel of nn/attention_kernels.cpp instead;
// tests/nn/test_attention_kernels.cpp checks that the two agree.
template <class Real>
void attention_forward_reference(Real* Y, Real* A, const Real* Q, const Real* K, const Real* V,
                                 std::int64_t T, std::int64_t S, std::int64_t dk,
                                 std::int64_t dv, bool causal, const unsigned char* pad) {
  const Real scale = Real(1) / std::sqrt(static_cast<Real>(dk));
  const Real minus_infinity = -std::numeric_limits<Real>::infinity();
  for (std::int64_t i = 0; i < T; ++i) {
    const Real* q = Q + i * dk;  // (d_k) query i
    Real* a = A + i * S;         // (S) its weights
    const std::int64_t end = causal ? std::min(S, i + 1) : S;  // it sees keys j < end
    Real m = minus_infinity;     // m_i: the largest score (a NaN is passed over, as std::max does)
    for (std::int64_t j = 0; j < S; ++j) {
      a[j] = 0;  // masked keys keep weight 0
      if (j >= end || (pad && pad[j])) continue;
      for (std::int64_t c = 0; c < dk; ++c) a[j] += q[c] * K[j * dk + c];
      a[j] *= scale;  // e_ij
      m = std::max(m, a[j]);
    }
    if (m == minus_infinity) {  // no key to see: weights 0 (NaN when a score is NaN)
      const bool nan = std::any_of(a, a + end, [](Real e) { return std::isnan(e); });
      std::fill(a, a + end, nan ? std::numeric_limits<Real>::quiet_NaN() : Real(0));
    } else {
      Real total = 0;
      for (std::int64_t j = 0; j < end; ++j)
        if (!(pad && pad[j])) total += (a[j] = std::exp(a[j] - m));
      for (std::int64_t j = 0; j < end; ++j) a[j] /= total;
    }
    Real* y = Y + i * dv;  // (d_v) y_i = Σ_j a_ij v_j
    std::fill(y, y + dv, Real(0));
    for (std::int64_t j = 0; j < S; ++j)
      for (std::int64_t c = 0; c < dv; ++c) y[c] += a[j] * V[j * dv + c];
  }
}

// In the forward pass y_i = Σ_j a_ij v_j, so  dv_j = Σ_i a_ij dy_i  and  da_ij = dy_i · v_j.
// a_i = softmax(e_i), whose Jacobian gives  de_ij = a_ij (da_ij − Σ_k da_ik a_ik)  (masked keys
// have a_ij = 0, so their de_ij is 0). e_ij = q_i · k_j / √d_k, so
//   dq_i = Σ_j de_ij k_j / √d_k   and   dk_j = Σ_i de_ij q_i / √d_k.
// dQ, dK and dV are written, not accumulated into.
template <class Real>
void attention_backward_reference(Real* dQ, Real* dK, Real* dV, const Real* dY, const Real* Q,
                                  const Real* K, const Real* V, const Real* A, std::int64_t T,
                                  std::int64_t S, std::int64_t dk, std::int64_t dv) {
  const Real scale = Real(1) / std::sqrt(static_cast<Real>(dk));
  std::fill(dQ, dQ + T * dk, Real(0));
  std::fill(dK, dK + S * dk, Real(0));
  std::fill(dV, dV + S * dv, Real(0));
  std::vector<Real> da(static_cast<std::size_t>(S));  // (S) da_ij of one query
  for (std::int64_t i = 0; i < T; ++i) {
    const Real* a = A + i * S;    // (S)
    const Real* dy = dY + i * dv;  // (d_v)
    Real dot = 0;  // Σ_k da_ik a_ik
    for (std::int64_t j = 0; j < S; ++j) {
      da[j] = 0;
      for (std::int64_t c = 0; c < dv; ++c) {
        da[j] += dy[c] * V[j * dv + c];
        dV[j * dv + c] += a[j] * dy[c];
      }
      dot += da[j] * a[j];
    }
    for (std::int64_t j = 0; j < S; ++j) {
      const Real de = a[j] * (da[j] - dot) * scale;  // de_ij / √d_k
      for (std::int64_t c = 0; c < dk; ++c) {
        dQ[i * dk + c] += de * K[j * dk + c];
        dK[j * dk + c] += de * Q[i * dk + c];
      }
    }
  }
}

template void attention_forward_reference<float>(float*, float*, const float*, const float*,
                                                 const float*, std::int64_t, std::int64_t,
                                                 std::int64_t, std::int64_t, bool,
                                                 const unsigned char*);
template void attention_forward_reference<double>(double*, double*, const double*, const double*,
                                                  const double*, std::int64_t, std::int64_t,
                                                  std::int64_t, std::int64_t, bool,
                                                  const unsigned char*);
template void attention_backward_reference<float>(float*, float*, float*, const float*,
                                                  const float*, const float*, const float*,
                                                  const float*, std::int64_t, std::int64_t,
                                                  std::int64_t, std::int64_t);
template void attention_backward_reference<double>(double*, double*, double*, const double*,
                                                   const double*, const double*, const double*,
                                                   const double*, std::int64_t, std::int64_t,
                                                   std::int64_t, std::int64_t);

// ---- the autograd nodes ------------------------------------------------------------------------

Tensor scaled_dot_product_attention(const Tensor& Q, const Tensor& K, const Tensor& V,
                                    const AttentionMask& mask, Tensor* weights,
                                    const AttentionDropout& drop) {
  const char* op = "scaled_dot_product_attention";
  const AttentionDims d = check_attention_args(Q, K, V, mask, op);
  // Q, K, V, Y each one (rows × width) matrix after the other.
  const AttentionLayouts l{
      OperandLayout::contiguous(d.T, d.dk), OperandLayout::contiguous(d.S, d.dk),
      OperandLayout::contiguous(d.S, d.dv), OperandLayout::contiguous(d.T, d.dv)};
  Shape y_shape = Q.shape(), a_shape = Q.shape();
  y_shape.back() = d.dv;
  a_shape.back() = d.S;
  return fused_attention(op, d, l, mask, {Q, K, V}, {0, 1, 2}, y_shape, a_shape, weights, drop);
}

Tensor scaled_dot_product_attention_composed(const Tensor& Q, const Tensor& K, const Tensor& V,
                                             const AttentionMask& mask, Tensor* weights,
                                             const AttentionDropout& drop) {
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
  // Attention dropout, in training: Ã = A ⊙ M, each weight dropped with probability p and the
  // rest scaled by 1/(1 − p) (nn/attention_dropout.h). Masked weights are 0 and stay 0.
  if (drop.on()) A = dropout(A, drop.p, /*training=*/true, *drop.gen);
  // Y = A V: each output row a weighted average of the value rows (SEEDS §2)
  return matmul(A, V);  // (..., T, d_v)
}

}  // namespace uwaga::nn
