#include "nn/scaled_dot_product_attention.h"

#include <cmath>
#include <limits>

#include "core/autograd.h"
#include "core/elementwise.h"
#include "core/matmul.h"
#include "core/shape_ops.h"
#include "core/softmax.h"

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
// keys. `pad` is that element's padding row (or null).
template <class T>
void masked_softmax_rows(T* A, std::int64_t rows, std::int64_t S, bool causal,
                         const unsigned char* pad) {
  for (std::int64_t i = 0; i < rows; ++i) {
    T* e = A + i * S;  // (S)
    auto visible = [&](std::int64_t j) { return !(causal && j > i) && !(pad && pad[j]); };
    T m = -std::numeric_limits<T>::infinity();
    for (std::int64_t j = 0; j < S; ++j)
      if (visible(j) && e[j] > m) m = e[j];
    if (m == -std::numeric_limits<T>::infinity()) {  // every key masked: weights 0
      std::fill_n(e, S, T(0));
      continue;
    }
    T total = 0;
    for (std::int64_t j = 0; j < S; ++j) {
      e[j] = visible(j) ? std::exp(e[j] - m) : T(0);
      total += e[j];
    }
    const T inv = T(1) / total;
    for (std::int64_t j = 0; j < S; ++j) e[j] *= inv;
  }
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& Q, const Tensor& K, const Tensor& V,
                                    const AttentionMask& mask, Tensor* weights) {
  const Dims d = check_attention_args(Q, K, V, mask, "scaled_dot_product_attention");
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.dk));
  Shape y_shape = Q.shape();
  y_shape.back() = d.dv;
  Tensor Y = Tensor::empty(y_shape, Q.dtype());                  // (N, T, d_v)
  AttentionSaved saved{Tensor::empty({d.N, d.T, d.S}, Q.dtype())};  // A (N, T, S)
  const std::vector<unsigned char> pad = padding_bytes(mask);
  const bool causal = mask.causal;
  const std::int64_t heads_per_row = d.N / d.B;  // batch element of n is n / heads_per_row

  dispatch_float(Q.dtype(), "scaled_dot_product_attention", [&](auto tag) {
    using T = decltype(tag);
    const T *q = Q.data<T>(), *k = K.data<T>(), *v = V.data<T>();
    T *a = saved.A.data<T>(), *y = Y.data<T>();
#pragma omp parallel for if (d.N > 1 && d.N * d.T * d.S > 4096)
    for (std::int64_t n = 0; n < d.N; ++n) {
      const T* Qn = q + n * d.T * d.dk;  // (T, d_k)
      const T* Kn = k + n * d.S * d.dk;  // (S, d_k)
      const T* Vn = v + n * d.S * d.dv;  // (S, d_v)
      T* An = a + n * d.T * d.S;         // (T, S)
      // E = Q Kᵀ / √d_k, written into A's buffer and turned into A in place.
      gemm<T>(false, true, d.T, d.S, d.dk, T(scale), Qn, d.dk, Kn, d.dk, T(0), An, d.S);
      masked_softmax_rows<T>(An, d.T, d.S, causal,
                             pad.empty() ? nullptr : pad.data() + (n / heads_per_row) * d.S);
      // Y = A V
      gemm<T>(false, false, d.T, d.dv, d.S, T(1), An, d.S, Vn, d.dv, T(0), y + n * d.T * d.dv,
              d.dv);
    }
  });
  if (weights) {
    Shape a_shape = Q.shape();
    a_shape.back() = d.S;
    *weights = reshape(saved.A.detach(), a_shape);
  }

  // Backward, for each batch element and head. In the forward pass Y = A V, so
  //   dV = Aᵀ dY   and   dA = dY Vᵀ.
  // A = softmax(E) row-wise, whose Jacobian gives  dE = A ⊙ (dA − rowsum(dA ⊙ A))
  // (masked entries have A = 0, so their dE is 0). E = Q Kᵀ/√d_k, so
  //   dQ = dE K / √d_k   and   dK = dEᵀ Q / √d_k.
  return record(Y, "scaled_dot_product_attention", {Q, K, V},
                [Q, K, V, saved, d, scale](const Tensor& g) -> std::vector<Tensor> {
    Tensor dQ = Tensor::empty(Q.shape(), Q.dtype());
    Tensor dK = Tensor::empty(K.shape(), K.dtype());
    Tensor dV = Tensor::empty(V.shape(), V.dtype());
    Tensor dE = Tensor::empty({d.N, d.T, d.S}, Q.dtype());
    dispatch_float(g.dtype(), "scaled_dot_product_attention", [&](auto tag) {
      using T = decltype(tag);
      const T *q = Q.data<T>(), *k = K.data<T>(), *v = V.data<T>(), *a = saved.A.data<T>();
      const T* dy = g.data<T>();
#pragma omp parallel for if (d.N > 1 && d.N * d.T * d.S > 4096)
      for (std::int64_t n = 0; n < d.N; ++n) {
        const T* An = a + n * d.T * d.S;         // (T, S)
        const T* dYn = dy + n * d.T * d.dv;      // (T, d_v)
        T* dEn = dE.data<T>() + n * d.T * d.S;   // (T, S)
        // dV = Aᵀ dY
        gemm<T>(true, false, d.S, d.dv, d.T, T(1), An, d.S, dYn, d.dv, T(0),
                dV.data<T>() + n * d.S * d.dv, d.dv);
        // dA = dY Vᵀ
        gemm<T>(false, true, d.T, d.S, d.dv, T(1), dYn, d.dv, v + n * d.S * d.dv, d.dv, T(0), dEn,
                d.S);
        // dE = A ⊙ (dA − rowsum(dA ⊙ A))
        for (std::int64_t i = 0; i < d.T; ++i) {
          T* row = dEn + i * d.S;
          const T* arow = An + i * d.S;
          T dot = 0;
          for (std::int64_t j = 0; j < d.S; ++j) dot += row[j] * arow[j];
          for (std::int64_t j = 0; j < d.S; ++j) row[j] = arow[j] * (row[j] - dot);
        }
        // dQ = dE K / √d_k,  dK = dEᵀ Q / √d_k
        gemm<T>(false, false, d.T, d.dk, d.S, T(scale), dEn, d.S, k + n * d.S * d.dk, d.dk, T(0),
                dQ.data<T>() + n * d.T * d.dk, d.dk);
        gemm<T>(true, false, d.S, d.dk, d.T, T(scale), dEn, d.S, q + n * d.T * d.dk, d.dk, T(0),
                dK.data<T>() + n * d.S * d.dk, d.dk);
      }
    });
    return {dQ, dK, dV};
  });
}

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
  Tensor A = softmax_composed(E, -1);  // A = softmax(E) along each row
  if (weights) *weights = A.detach();
  return matmul(A, V);  // Y = A V
}

}  // namespace uwaga::nn
