#include "nn/attention_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/graph.h"
#include "core/fast_math.h"
#include "core/l1_block.h"
#include "core/matmul.h"
#include "core/shape_ops.h"
#include "core/threads.h"
#include "nn/dropout.h"

namespace uwaga::nn {
namespace {

// The padding mask as bytes, one row per batch element: 1 = padded key.
std::vector<unsigned char> padding_bytes(const AttentionMask& mask) {
  std::vector<unsigned char> out;
  if (!mask.key_padding.defined()) return out;
  out.resize(static_cast<std::size_t>(mask.key_padding.numel()));
  for (std::int64_t i = 0; i < mask.key_padding.numel(); ++i)
    out[static_cast<std::size_t>(i)] = mask.key_padding.flat(i) != 0;
  return out;
}

// max_j e_j over n values (−∞ when n = 0), in sixteen running maxima, one per vector lane, so
// that the compiler vectorises it: GCC 12 leaves `m = std::max(m, e[j])` scalar even under
// `omp simd reduction(max : m)`, and that loop was half of the softmax's time. The maximum is
// exact in any order. A NaN is skipped, as std::max(m, NaN) skips it: the exponentials then make
// its row NaN, and a row of NaN scores only (maximum −∞) is told from a masked one below.
template <class T>
T max_of(const T* e, std::int64_t n) {
  constexpr int kLanes = 16;
  T lane[kLanes];
  std::fill_n(lane, kLanes, -std::numeric_limits<T>::infinity());
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) lane[l] = std::max(lane[l], e[j + l]);
  T m = -std::numeric_limits<T>::infinity();
  for (; j < n; ++j) m = std::max(m, e[j]);
  for (int l = 0; l < kLanes; ++l) m = std::max(m, lane[l]);
  return m;
}

// A ← softmax(A) over each row of the (T × S) score matrix of one batch element, skipping masked
// keys: row i sees keys j < end (end = i + 1 when causal) that are not padding. `pad` is that
// element's padding row (or null). Masked weights are exactly 0.
//   a_ij = exp(e_ij − m_i) / Σ_j exp(e_ij − m_i),  m_i = max_j e_ij  (subtracting m_i changes
//   nothing but keeps exp from overflowing)
// The rows go through in blocks, one step of the formula at a time for every row of the block
// (all maxima, then all exponentials, then all sums, then all scalings), rather than row by row:
// a row of a small model is a few vectors long, and doing its four steps back to back leaves the
// core waiting on each step's latency; a block's rows are independent, so their work overlaps
// (a quarter to a third faster at S = 17 … 128). The readable reference is the composed path,
// softmax of primitives (scaled_dot_product_attention_composed); tests/nn/test_attention_kernels.cpp
// checks that the two agree over more rows than one block, with and without masks.
template <class T>
void masked_softmax_rows(T* A, std::int64_t rows, std::int64_t S, bool causal,
                         const unsigned char* pad) {
  constexpr T kMinusInf = -std::numeric_limits<T>::infinity();
  // At most 64 rows a block, and no more than stay in the L1 cache between the passes.
  const std::int64_t block = l1_block_rows(S * static_cast<std::int64_t>(sizeof(T)));
  T row_max[64], inv_total[64];
  auto end_of = [&](std::int64_t i) { return causal ? std::min(S, i + 1) : S; };
  for (std::int64_t i0 = 0; i0 < rows; i0 += block) {
    const std::int64_t n = std::min(block, rows - i0);
    for (std::int64_t r = 0; r < n; ++r) {  // masked keys, then m_i
      T* e = A + (i0 + r) * S;
      const std::int64_t end = end_of(i0 + r);
      std::fill(e + end, e + S, T(0));
      if (pad)
        for (std::int64_t j = 0; j < end; ++j)
          if (pad[j]) e[j] = kMinusInf;
      row_max[r] = max_of(e, end);
    }
    for (std::int64_t r = 0; r < n; ++r) {  // exp(e_ij − m_i)
      T* e = A + (i0 + r) * S;
      const std::int64_t end = end_of(i0 + r);
      const T m = row_max[r];
      if (m == kMinusInf) {  // every key masked: weights 0 — unless the scores are NaN
        const bool nan = std::any_of(e, e + end, [](T v) { return std::isnan(v); });
        std::fill_n(e, end, nan ? std::numeric_limits<T>::quiet_NaN() : T(0));
        continue;
      }
#pragma omp simd
      for (std::int64_t j = 0; j < end; ++j) e[j] = exp_nonpositive_t(e[j] - m);  // e_ij ≤ m_i
      // exp(−∞) is e^−87 in float32 here, not 0: padding is zeroed below
      if (pad)
        for (std::int64_t j = 0; j < end; ++j)
          if (pad[j]) e[j] = T(0);
    }
    for (std::int64_t r = 0; r < n; ++r) {  // 1 / Σ_j exp(e_ij − m_i)
      const T* e = A + (i0 + r) * S;
      const std::int64_t end = end_of(i0 + r);
      T total = 0;
#pragma omp simd reduction(+ : total)
      for (std::int64_t j = 0; j < end; ++j) total += e[j];
      inv_total[r] = row_max[r] == kMinusInf ? T(0) : T(1) / total;  // fully masked: stays 0
    }
    for (std::int64_t r = 0; r < n; ++r) {
      T* e = A + (i0 + r) * S;
      const std::int64_t end = end_of(i0 + r);
      const T inv = inv_total[r];
#pragma omp simd
      for (std::int64_t j = 0; j < end; ++j) e[j] *= inv;
    }
  }
}

// Asks the core to bring `count` rows of `width` values, `ld` apart, into its cache (every cache
// line of each row). In training, a head's operands come back from the last-level cache: its
// backward runs long after its forward, and a micro-batch's A alone is a megabyte. Each head's
// products are a microsecond or two, too short for the hardware's prefetcher to see the rows'
// stride; fetched one head ahead, attention's backward took 8 % less time in cifar10-small's step.
template <class T>
void prefetch_rows(const T* m, std::int64_t count, std::int64_t ld, std::int64_t width) {
  constexpr std::int64_t kLine = 64 / sizeof(T);
  for (std::int64_t r = 0; r < count; ++r) {
    const T* row = m + r * ld;
    for (std::int64_t c = 0; c < width; c += kLine) __builtin_prefetch(row + c);
    __builtin_prefetch(row + width - 1);
  }
}

template <class T>
struct Operand {
  T* data;
  OperandLayout layout;
  T* operator[](std::int64_t n) const { return data + layout.at(n); }
  std::int64_t ld() const { return layout.row_stride; }
};

// Ã = A ⊙ M over one head's (T × S) weights (`count` = T·S values): attention dropout's
// dropped weights, into `dropped`.
template <class T>
void dropped_weights(T* dropped, const T* A, const T* M, std::int64_t count) {
#pragma omp simd
  for (std::int64_t k = 0; k < count; ++k) dropped[k] = A[k] * M[k];
}

// Forward for every batch·head n:  E = Q Kᵀ/√d_k,  A = softmax(E + mask),  Y = A V — or, with
// attention dropout's mask M (N, T, S) (null without), Y = Ã V with Ã = A ⊙ M.
// A (N, T, S) is kept for the backward pass.
template <class T>
void attention_forward(const AttentionDims& d, const AttentionLayouts& l, const unsigned char* pad,
                       bool causal, double scale, const Tensor& Q, const Tensor& K,
                       const Tensor& V, const T* M, Tensor A, Tensor Y) {
  const Operand<const T> q{Q.data<T>(), l.q}, k{K.data<T>(), l.k}, v{V.data<T>(), l.v};
  const Operand<T> y{Y.data<T>(), l.y};
  T* a = A.data<T>();
  const std::int64_t heads_per_row = d.N / d.B;  // batch element of n is n / heads_per_row
  parallel_for(d.N, d.N * d.T * d.S > 4096, [&](std::int64_t n0, std::int64_t n1) {
    // Ã of one (T, S) matrix at a time, in a buffer of this piece's own (with dropout only).
    Tensor scratch = M ? Tensor::empty({d.T, d.S}, Q.dtype()) : Tensor();
    for (std::int64_t n = n0; n < n1; ++n) {
      T* An = a + n * d.T * d.S;  // (T, S)
      if (n + 1 < n1) {  // the next head's Q, K and V, while this one computes
        prefetch_rows(q[n + 1], d.T, q.ld(), d.dk);
        prefetch_rows(k[n + 1], d.S, k.ld(), d.dk);
        prefetch_rows(v[n + 1], d.S, v.ld(), d.dv);
      }
      // E = Q Kᵀ / √d_k, written into A's buffer and turned into A in place.
      gemm<T>(false, true, d.T, d.S, d.dk, T(scale), q[n], q.ld(), k[n], k.ld(), T(0), An, d.S);
      masked_softmax_rows<T>(An, d.T, d.S, causal, pad ? pad + (n / heads_per_row) * d.S : nullptr);
      const T* weights = An;  // what Y averages with: A, or Ã = A ⊙ M with dropout
      if (M) {
        dropped_weights(scratch.data<T>(), An, M + n * d.T * d.S, d.T * d.S);
        weights = scratch.data<T>();
      }
      // Y = A V  (Ã V)
      gemm<T>(false, false, d.T, d.dv, d.S, T(1), weights, d.S, v[n], v.ld(), T(0), y[n], y.ld());
    }
  });
}

// Backward, for each batch·head. In the forward pass Y = A V, so
//   dV = Aᵀ dY   and   dA = dY Vᵀ.
// With attention dropout the forward pass was Y = Ã V, Ã = A ⊙ M (M fixed, saved), so
//   dV = Ãᵀ dY,   dÃ = dY Vᵀ,   and since Ã_ij = A_ij M_ij,   dA = dÃ ⊙ M
// — the same mask, as dropout's backward; the softmax below is A's, undropped.
// A = softmax(E) row-wise, whose Jacobian gives  dE = A ⊙ (dA − rowsum(dA ⊙ A))
// (masked entries have A = 0, so their dE is 0). E = Q Kᵀ/√d_k, so
//   dQ = dE K / √d_k   and   dK = dEᵀ Q / √d_k.
template <class T>
void attention_backward(const AttentionDims& d, const AttentionLayouts& l, double scale,
                        const Tensor& Q, const Tensor& K, const Tensor& V, const Tensor& A,
                        const T* M, const Tensor& dY, Tensor dQ, Tensor dK, Tensor dV) {
  const Operand<const T> q{Q.data<T>(), l.q}, k{K.data<T>(), l.k}, v{V.data<T>(), l.v};
  const Operand<const T> dy{dY.data<T>(), l.y};
  const Operand<T> dq{dQ.data<T>(), l.q}, dk{dK.data<T>(), l.k}, dv{dV.data<T>(), l.v};
  const T* a = A.data<T>();
  parallel_for(d.N, d.N * d.T * d.S > 4096, [&](std::int64_t n0, std::int64_t n1) {
    // dE of one (T, S) matrix at a time, in a buffer of this piece's own.
    Tensor scratch = Tensor::empty({d.T, d.S}, Q.dtype());
    T* dE = scratch.data<T>();
    // Ã = A ⊙ M likewise, with dropout only.
    Tensor dropped = M ? Tensor::empty({d.T, d.S}, Q.dtype()) : Tensor();
    for (std::int64_t n = n0; n < n1; ++n) {
      const T* An = a + n * d.T * d.S;  // (T, S)
      const T* Mn = M ? M + n * d.T * d.S : nullptr;  // (T, S)
      if (n + 1 < n1) {  // the next head's operands, while this one computes
        prefetch_rows(An + d.T * d.S, 1, 0, d.T * d.S);  // its A
        prefetch_rows(q[n + 1], d.T, q.ld(), d.dk);
        prefetch_rows(k[n + 1], d.S, k.ld(), d.dk);
        prefetch_rows(v[n + 1], d.S, v.ld(), d.dv);
        prefetch_rows(dy[n + 1], d.T, dy.ld(), d.dv);
      }
      const T* weights = An;  // what Y averaged with: A, or Ã = A ⊙ M
      if (Mn) {
        dropped_weights(dropped.data<T>(), An, Mn, d.T * d.S);
        weights = dropped.data<T>();
      }
      // dV = Aᵀ dY  (Ãᵀ dY)
      gemm<T>(true, false, d.S, d.dv, d.T, T(1), weights, d.S, dy[n], dy.ld(), T(0), dv[n],
              dv.ld());
      // dA = dY Vᵀ  (dÃ, with dropout)
      gemm<T>(false, true, d.T, d.S, d.dv, T(1), dy[n], dy.ld(), v[n], v.ld(), T(0), dE, d.S);
      // dE = A ⊙ (dA − rowsum(dA ⊙ A))
      for (std::int64_t i = 0; i < d.T; ++i) {
        T* row = dE + i * d.S;
        const T* arow = An + i * d.S;
        if (Mn) {  // dA = dÃ ⊙ M
          const T* mrow = Mn + i * d.S;
#pragma omp simd
          for (std::int64_t j = 0; j < d.S; ++j) row[j] *= mrow[j];
        }
        T dot = 0;  // rowsum(dA ⊙ A)
#pragma omp simd reduction(+ : dot)
        for (std::int64_t j = 0; j < d.S; ++j) dot += row[j] * arow[j];
#pragma omp simd
        for (std::int64_t j = 0; j < d.S; ++j) row[j] = arow[j] * (row[j] - dot);
      }
      // dQ = dE K / √d_k,  dK = dEᵀ Q / √d_k
      gemm<T>(false, false, d.T, d.dk, d.S, T(scale), dE, d.S, k[n], k.ld(), T(0), dq[n], dq.ld());
      gemm<T>(true, false, d.S, d.dk, d.T, T(scale), dE, d.S, q[n], q.ld(), T(0), dk[n], dk.ld());
    }
  });
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

Tensor fused_attention(const char* op, const AttentionDims& d, const AttentionLayouts& l,
                       const AttentionMask& mask, const std::vector<Tensor>& inputs,
                       std::array<std::size_t, 3> source, const Shape& y_shape,
                       const Shape& a_shape, Tensor* weights, const AttentionDropout& drop) {
  const Tensor &Q = inputs[source[0]], &K = inputs[source[1]], &V = inputs[source[2]];
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.dk));
  Tensor Y = Tensor::empty(y_shape, Q.dtype());
  AttentionSaved saved{Tensor::empty({d.N, d.T, d.S}, Q.dtype()), Tensor()};  // A (N, T, S)
  if (drop.on()) {
    if (!drop.gen) fail(op, ": attention dropout ", drop.p, " needs a generator");
    // M (N, T, S): weight (n, i, j) takes the draw dropout() gives element (n, i, j) of A.
    saved.M = dropout_mask({d.N, d.T, d.S}, Q.dtype(), drop.p, *drop.gen);
  }
  const std::vector<unsigned char> pad = padding_bytes(mask);
  dispatch_float(Q.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    attention_forward<T>(d, l, pad.empty() ? nullptr : pad.data(), mask.causal, scale, Q, K, V,
                         saved.M.defined() ? saved.M.data<T>() : nullptr, saved.A, Y);
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
      using T = decltype(tag);
      attention_backward<T>(d, l, scale, inputs[source[0]], inputs[source[1]], inputs[source[2]],
                            saved.A, saved.M.defined() ? saved.M.data<T>() : nullptr, g,
                            grads[source[0]], grads[source[1]], grads[source[2]]);
    });
    return grads;
  }, std::move(returned));
}

Tensor attention_heads(const Tensor& qkv, std::int64_t heads, const AttentionMask& mask,
                       Tensor* weights, const AttentionDropout& drop) {
  const char* op = "attention_heads";
  check_float(qkv, op);
  if (qkv.dim() != 3 || heads < 1 || qkv.size(2) % (3 * heads) != 0)
    fail(op, ": qkv ", shape_str(qkv.shape()), " with ", heads, " heads: expected (B, T, 3·h·d)");
  const std::int64_t B = qkv.size(0), T = qkv.size(1), D = qkv.size(2) / 3, dk = D / heads;
  check_packed_mask(mask, B, T, op, "qkv " + shape_str(qkv.shape()));
  const AttentionDims d{B * heads, T, T, dk, dk, mask.key_padding.defined() ? B : 1};
  // Q = qkv[..., 0:D], K = qkv[..., D:2D], V = qkv[..., 2D:3D]; head i is columns i·d … (i+1)·d
  // of each; the heads' outputs go side by side into (B, T, D).
  const AttentionLayouts l{OperandLayout::packed(heads, T, 3 * D, dk, 0),
                           OperandLayout::packed(heads, T, 3 * D, dk, D),
                           OperandLayout::packed(heads, T, 3 * D, dk, 2 * D),
                           OperandLayout::packed(heads, T, D, dk, 0)};
  return fused_attention(op, d, l, mask, {qkv}, {0, 0, 0}, {B, T, D}, {B, heads, T, T}, weights,
                         drop);
}

Tensor attention_heads(const Tensor& q, const Tensor& kv, std::int64_t heads,
                       const AttentionMask& mask, Tensor* weights, const AttentionDropout& drop) {
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
  const AttentionDims d{B * heads, T, S, dk, dk, mask.key_padding.defined() ? B : 1};
  // K = kv[..., 0:D], V = kv[..., D:2D].
  const AttentionLayouts l{OperandLayout::packed(heads, T, D, dk, 0),
                           OperandLayout::packed(heads, S, 2 * D, dk, 0),
                           OperandLayout::packed(heads, S, 2 * D, dk, D),
                           OperandLayout::packed(heads, T, D, dk, 0)};
  return fused_attention(op, d, l, mask, {q, kv}, {0, 1, 1}, {B, T, D}, {B, heads, T, S}, weights,
                         drop);
}

}  // namespace uwaga::nn
