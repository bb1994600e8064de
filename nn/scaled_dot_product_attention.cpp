#include "nn/scaled_dot_product_attention.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/autograd.h"
#include "core/elementwise.h"
#include "core/fast_math.h"
#include "core/matmul.h"
#include "core/shape_ops.h"
#include "core/threads.h"
#include "nn/softmax.h"

namespace uwaga::nn {
namespace {

struct Dims {
  std::int64_t N, T, S, dk, dv;  // batch·heads, queries, keys, key width, value width
  std::int64_t B;                // rows of the key padding mask (1 when there is none)
};

Dims check_attention_args(const Tensor& Q, const Tensor& K, const Tensor& V,
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
  Dims d{numel(lead), Q.size(-2), K.size(-2), Q.size(-1), V.size(-1), 1};
  if (mask.key_padding.defined()) {
    const Tensor& kp = mask.key_padding;
    if (kp.dim() != 2 || kp.size(1) != d.S || lead.empty() || kp.size(0) != lead[0])
      fail(op, ": key padding mask ", shape_str(kp.shape()), " does not fit ", shapes(),
           ": expected (", lead.empty() ? 1 : lead[0], ", ", d.S, ")");
    d.B = kp.size(0);
  }
  return d;
}

// The padding mask as bytes, one row per batch element: 1 = padded key.
std::vector<unsigned char> padding_bytes(const AttentionMask& mask) {
  std::vector<unsigned char> out;
  if (!mask.key_padding.defined()) return out;
  out.resize(static_cast<std::size_t>(mask.key_padding.numel()));
  for (std::int64_t i = 0; i < mask.key_padding.numel(); ++i)
    out[static_cast<std::size_t>(i)] = mask.key_padding.flat(i) != 0;
  return out;
}

// A ← softmax(A) over each row of the (T × S) score matrix of one batch element, skipping masked
// keys: row i sees keys j < end (end = i + 1 when causal) that are not padding. `pad` is that
// element's padding row (or null). Masked weights are exactly 0.
template <class T>
void masked_softmax_rows(T* A, std::int64_t rows, std::int64_t S, bool causal,
                         const unsigned char* pad) {
  constexpr T kMinusInf = -std::numeric_limits<T>::infinity();
  for (std::int64_t i = 0; i < rows; ++i) {
    T* e = A + i * S;  // (S)
    const std::int64_t end = causal ? std::min(S, i + 1) : S;
    std::fill(e + end, e + S, T(0));
    if (pad)
      for (std::int64_t j = 0; j < end; ++j)
        if (pad[j]) e[j] = kMinusInf;
    T m = kMinusInf;
#pragma omp simd reduction(max : m)
    for (std::int64_t j = 0; j < end; ++j) m = std::max(m, e[j]);
    if (m == kMinusInf) {  // every key masked: weights 0
      std::fill_n(e, end, T(0));
      continue;
    }
    T total = 0;
#pragma omp simd reduction(+ : total)
    for (std::int64_t j = 0; j < end; ++j) {
      e[j] = exp_t(e[j] - m);  // exp_t(−∞) is e^−87 in float32, not 0: padding is zeroed below
      total += e[j];
    }
    if (pad) {
      total = 0;
      for (std::int64_t j = 0; j < end; ++j) total += (e[j] = pad[j] ? T(0) : e[j]);
    }
    const T inv = T(1) / total;
#pragma omp simd
    for (std::int64_t j = 0; j < end; ++j) e[j] *= inv;
  }
}

// Where the matrix of batch·head n of one operand lives: its row r starts at
//   data + (n / heads)·batch_stride + (n % heads)·head_offset + column + r·row_stride.
// A contiguous (N, rows, width) tensor is heads = 1, batch_stride = rows·width, row_stride =
// width. The heads of a projection (B, rows, parts·h·d) are heads = h, head_offset = d,
// row_stride = parts·h·d and `column` = where the part (Q, K or V) starts: the kernel reads them
// in place, so multi-head attention needs no split or merge copies.
struct Layout {
  std::int64_t heads, batch_stride, head_offset, row_stride, column;
  std::int64_t at(std::int64_t n) const {
    return (n / heads) * batch_stride + (n % heads) * head_offset + column;
  }
};

Layout contiguous(std::int64_t rows, std::int64_t width) { return {1, rows * width, 0, width, 0}; }

Layout packed(std::int64_t heads, std::int64_t rows, std::int64_t row_width, std::int64_t d,
              std::int64_t column) {
  return {heads, rows * row_width, d, row_width, column};
}

template <class T>
struct Operand {
  T* data;
  Layout layout;
  T* operator[](std::int64_t n) const { return data + layout.at(n); }
  std::int64_t ld() const { return layout.row_stride; }
};

// The layouts of Q, K, V and Y (the gradients dQ, dK, dV, dY have the same ones).
struct Layouts {
  Layout q, k, v, y;
};

// Forward for every batch·head n:  E = Q Kᵀ/√d_k,  A = softmax(E + mask),  Y = A V.
// A (N, T, S) is kept for the backward pass.
template <class T>
void attention_forward(const Dims& d, const Layouts& l, const unsigned char* pad, bool causal,
                       double scale, const Tensor& Q, const Tensor& K, const Tensor& V,
                       Tensor A, Tensor Y) {
  const Operand<const T> q{Q.data<T>(), l.q}, k{K.data<T>(), l.k}, v{V.data<T>(), l.v};
  const Operand<T> y{Y.data<T>(), l.y};
  T* a = A.data<T>();
  const std::int64_t heads_per_row = d.N / d.B;  // batch element of n is n / heads_per_row
  parallel_for(d.N, d.N * d.T * d.S > 4096, [&](std::int64_t n0, std::int64_t n1) {
    for (std::int64_t n = n0; n < n1; ++n) {
      T* An = a + n * d.T * d.S;  // (T, S)
      // E = Q Kᵀ / √d_k, written into A's buffer and turned into A in place.
      gemm<T>(false, true, d.T, d.S, d.dk, T(scale), q[n], q.ld(), k[n], k.ld(), T(0), An, d.S);
      masked_softmax_rows<T>(An, d.T, d.S, causal, pad ? pad + (n / heads_per_row) * d.S : nullptr);
      // Y = A V
      gemm<T>(false, false, d.T, d.dv, d.S, T(1), An, d.S, v[n], v.ld(), T(0), y[n], y.ld());
    }
  });
}

// Backward, for each batch·head. In the forward pass Y = A V, so
//   dV = Aᵀ dY   and   dA = dY Vᵀ.
// A = softmax(E) row-wise, whose Jacobian gives  dE = A ⊙ (dA − rowsum(dA ⊙ A))
// (masked entries have A = 0, so their dE is 0). E = Q Kᵀ/√d_k, so
//   dQ = dE K / √d_k   and   dK = dEᵀ Q / √d_k.
template <class T>
void attention_backward(const Dims& d, const Layouts& l, double scale, const Tensor& Q,
                        const Tensor& K, const Tensor& V, const Tensor& A, const Tensor& dY,
                        Tensor dQ, Tensor dK, Tensor dV) {
  const Operand<const T> q{Q.data<T>(), l.q}, k{K.data<T>(), l.k}, v{V.data<T>(), l.v};
  const Operand<const T> dy{dY.data<T>(), l.y};
  const Operand<T> dq{dQ.data<T>(), l.q}, dk{dK.data<T>(), l.k}, dv{dV.data<T>(), l.v};
  const T* a = A.data<T>();
  parallel_for(d.N, d.N * d.T * d.S > 4096, [&](std::int64_t n0, std::int64_t n1) {
    // dE of one (T, S) matrix at a time, in a buffer of this piece's own.
    Tensor scratch = Tensor::empty({d.T, d.S}, Q.dtype());
    T* dE = scratch.data<T>();
    for (std::int64_t n = n0; n < n1; ++n) {
      const T* An = a + n * d.T * d.S;  // (T, S)
      // dV = Aᵀ dY
      gemm<T>(true, false, d.S, d.dv, d.T, T(1), An, d.S, dy[n], dy.ld(), T(0), dv[n], dv.ld());
      // dA = dY Vᵀ
      gemm<T>(false, true, d.T, d.S, d.dv, T(1), dy[n], dy.ld(), v[n], v.ld(), T(0), dE, d.S);
      // dE = A ⊙ (dA − rowsum(dA ⊙ A))
      for (std::int64_t i = 0; i < d.T; ++i) {
        T* row = dE + i * d.S;
        const T* arow = An + i * d.S;
        T dot = 0;
        for (std::int64_t j = 0; j < d.S; ++j) dot += row[j] * arow[j];
        for (std::int64_t j = 0; j < d.S; ++j) row[j] = arow[j] * (row[j] - dot);
      }
      // dQ = dE K / √d_k,  dK = dEᵀ Q / √d_k
      gemm<T>(false, false, d.T, d.dk, d.S, T(scale), dE, d.S, k[n], k.ld(), T(0), dq[n], dq.ld());
      gemm<T>(true, false, d.S, d.dk, d.T, T(scale), dE, d.S, q[n], q.ld(), T(0), dk[n], dk.ld());
    }
  });
}

// Runs the fused forward and records the node. `source` says which input holds Q, K and V (for
// self-attention's packed projections all three live in input 0, so the node has one input and
// one gradient); the layouts say where in it. `y_shape` and `a_shape` are the shapes Y and A are
// returned with.
Tensor attention_node(const char* op, const Dims& d, const Layouts& l, const AttentionMask& mask,
                      const std::vector<Tensor>& inputs, std::array<std::size_t, 3> source,
                      const Shape& y_shape, const Shape& a_shape, Tensor* weights) {
  const Tensor &Q = inputs[source[0]], &K = inputs[source[1]], &V = inputs[source[2]];
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.dk));
  Tensor Y = Tensor::empty(y_shape, Q.dtype());
  AttentionSaved saved{Tensor::empty({d.N, d.T, d.S}, Q.dtype())};  // A (N, T, S)
  const std::vector<unsigned char> pad = padding_bytes(mask);
  dispatch_float(Q.dtype(), op, [&](auto tag) {
    attention_forward<decltype(tag)>(d, l, pad.empty() ? nullptr : pad.data(), mask.causal, scale,
                                     Q, K, V, saved.A, Y);
  });
  std::vector<Tensor> returned;  // A, when the caller gets it back: backward() checks it is unchanged
  if (weights) {
    *weights = reshape(saved.A.detach(), a_shape);
    returned.push_back(saved.A);
  }

  return record(Y, op, inputs, [inputs, source, saved, d, l, scale, op](const Tensor& g) {
    // Every element of an input is read as exactly one Q, K or V entry of one head, so the
    // kernel writes each gradient element once: no zero-filling needed.
    std::vector<Tensor> grads;
    for (const Tensor& in : inputs) grads.push_back(Tensor::empty(in.shape(), in.dtype()));
    dispatch_float(g.dtype(), op, [&](auto tag) {
      attention_backward<decltype(tag)>(d, l, scale, inputs[source[0]], inputs[source[1]],
                                        inputs[source[2]], saved.A, g, grads[source[0]],
                                        grads[source[1]], grads[source[2]]);
    });
    return grads;
  }, std::move(returned));
}

void check_packed_mask(const AttentionMask& mask, std::int64_t B, std::int64_t S, const char* op,
                       const std::string& shapes) {
  if (!mask.key_padding.defined()) return;
  const Tensor& kp = mask.key_padding;
  if (kp.dim() != 2 || kp.size(0) != B || kp.size(1) != S)
    fail(op, ": key padding mask ", shape_str(kp.shape()), " does not fit ", shapes,
         ": expected (", B, ", ", S, ")");
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& Q, const Tensor& K, const Tensor& V,
                                    const AttentionMask& mask, Tensor* weights) {
  const char* op = "scaled_dot_product_attention";
  const Dims d = check_attention_args(Q, K, V, mask, op);
  const Layouts l{contiguous(d.T, d.dk), contiguous(d.S, d.dk), contiguous(d.S, d.dv),
                  contiguous(d.T, d.dv)};
  Shape y_shape = Q.shape(), a_shape = Q.shape();
  y_shape.back() = d.dv;
  a_shape.back() = d.S;
  return attention_node(op, d, l, mask, {Q, K, V}, {0, 1, 2}, y_shape, a_shape, weights);
}

Tensor attention_heads(const Tensor& qkv, std::int64_t heads, const AttentionMask& mask,
                       Tensor* weights) {
  const char* op = "attention_heads";
  check_float(qkv, op);
  if (qkv.dim() != 3 || heads < 1 || qkv.size(2) % (3 * heads) != 0)
    fail(op, ": qkv ", shape_str(qkv.shape()), " with ", heads, " heads: expected (B, T, 3·h·d)");
  const std::int64_t B = qkv.size(0), T = qkv.size(1), D = qkv.size(2) / 3, dk = D / heads;
  check_packed_mask(mask, B, T, op, "qkv " + shape_str(qkv.shape()));
  const Dims d{B * heads, T, T, dk, dk, mask.key_padding.defined() ? B : 1};
  // Q = qkv[..., 0:D], K = qkv[..., D:2D], V = qkv[..., 2D:3D]; head i is columns i·d … (i+1)·d
  // of each; the heads' outputs go side by side into (B, T, D).
  const Layouts l{packed(heads, T, 3 * D, dk, 0), packed(heads, T, 3 * D, dk, D),
                  packed(heads, T, 3 * D, dk, 2 * D), packed(heads, T, D, dk, 0)};
  return attention_node(op, d, l, mask, {qkv}, {0, 0, 0}, {B, T, D}, {B, heads, T, T}, weights);
}

Tensor attention_heads(const Tensor& q, const Tensor& kv, std::int64_t heads,
                       const AttentionMask& mask, Tensor* weights) {
  const char* op = "attention_heads";
  check_float(q, op);
  check_float(kv, op);
  check_same_dtype(q, kv, op);
  const std::string shapes = "q " + shape_str(q.shape()) + ", kv " + shape_str(kv.shape());
  if (q.dim() != 3 || kv.dim() != 3 || heads < 1 || q.size(2) % heads != 0 ||
      kv.size(2) != 2 * q.size(2) || kv.size(0) != q.size(0))
    fail(op, ": ", shapes, " with ", heads,
         " heads: expected q (B, T, h·d) and kv (B, S, 2·h·d)");
  const std::int64_t B = q.size(0), T = q.size(1), S = kv.size(1), D = q.size(2), dk = D / heads;
  check_packed_mask(mask, B, S, op, shapes);
  const Dims d{B * heads, T, S, dk, dk, mask.key_padding.defined() ? B : 1};
  // K = kv[..., 0:D], V = kv[..., D:2D].
  const Layouts l{packed(heads, T, D, dk, 0), packed(heads, S, 2 * D, dk, 0),
                  packed(heads, S, 2 * D, dk, D), packed(heads, T, D, dk, 0)};
  return attention_node(op, d, l, mask, {q, kv}, {0, 1, 1}, {B, T, D}, {B, heads, T, S}, weights);
}

namespace {

// 1 for each query row i (of batch element b) whose keys are all masked, 0 otherwise, shaped
// (B, 1, …, 1, T, 1) with `rank` dims (B = 1 without a padding mask) to broadcast against E.
// With the causal mask row i sees keys j ≤ i; padding removes keys from every row.
Tensor rows_without_keys(const AttentionMask& mask, const Dims& d, std::int64_t rank,
                         DType dtype) {
  const std::vector<unsigned char> pad = padding_bytes(mask);  // (B, S) or empty
  Shape shape(static_cast<std::size_t>(rank), 1);
  shape.front() = d.B;
  shape[shape.size() - 2] = d.T;
  Tensor out = Tensor::zeros(shape, dtype);
  for (std::int64_t b = 0; b < d.B; ++b)
    for (std::int64_t i = 0; i < d.T; ++i) {
      const std::int64_t end = mask.causal ? std::min(d.S, i + 1) : d.S;
      bool has_key = false;
      for (std::int64_t j = 0; j < end && !has_key; ++j)
        has_key = pad.empty() || !pad[static_cast<std::size_t>(b * d.S + j)];
      if (!has_key) out.set_flat(b * d.T + i, 1);
    }
  return out;
}

}  // namespace

Tensor scaled_dot_product_attention_composed(const Tensor& Q, const Tensor& K, const Tensor& V,
                                             const AttentionMask& mask, Tensor* weights) {
  const Dims d = check_attention_args(Q, K, V, mask, "scaled_dot_product_attention_composed");
  // E = Q Kᵀ / √d_k
  Tensor E = matmul(Q, transpose(K, -2, -1)) / std::sqrt(static_cast<double>(d.dk));
  if (mask.causal) {
    Tensor future = Tensor::zeros({d.T, d.S}, Q.dtype());  // 1 where j > i
    for (std::int64_t i = 0; i < d.T; ++i)
      for (std::int64_t j = i + 1; j < d.S; ++j) future.set({i, j}, 1);
    E = masked_fill(E, future, -std::numeric_limits<double>::infinity());
  }
  if (mask.key_padding.defined()) {
    Shape s(static_cast<std::size_t>(Q.dim()), 1);  // (B, 1, ..., 1, S)
    s.front() = d.B;
    s.back() = d.S;
    E = masked_fill(E, reshape(mask.key_padding, s), -std::numeric_limits<double>::infinity());
  }
  Tensor A;  // (..., T, S)
  if (mask.empty()) {
    A = softmax_composed(E, -1);  // A = softmax(E) along each row
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
  return matmul(A, V);  // Y = A V
}

}  // namespace uwaga::nn
