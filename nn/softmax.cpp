#include "nn/softmax.h"

#include <algorithm>
#include <cmath>

#include "core/elementwise.h"
#include "core/graph.h"
#include "core/reduction.h"
#include "core/threads.h"

namespace uwaga::nn {
namespace {

// ---- one row of n elements, `stride` apart ------------------------------------------------------
// The plain loops, and the only ones: softmax is not tuned beyond running rows on several threads
// (the tuned, masked softmax of attention is nn/attention_kernels.cpp's). The row kernels below
// call these with stride 1 (contiguous rows); softmax along a dim that is not the last uses
// stride = the size of the dims after it, which visits the same (outer, n, inner) layout without
// a transposed copy.

// y = softmax(x). Subtracting the max first leaves the result unchanged (the factor exp(-max)
// cancels between numerator and denominator) and keeps exp from overflowing.
template <class T>
inline void softmax_row(T* y, const T* x, std::int64_t n, std::int64_t stride) {
  T m = x[0];
  for (std::int64_t j = 1; j < n; ++j) m = std::max(m, x[j * stride]);
  T s = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    y[j * stride] = std::exp(x[j * stride] - m);
    s += y[j * stride];
  }
  const T inv = T(1) / s;
  for (std::int64_t j = 0; j < n; ++j) y[j * stride] *= inv;
}

// dx = y ⊙ (dy − Σ_j dy_j y_j), added to dx when accumulate is true.
template <class T>
inline void softmax_row_backward(T* dx, const T* dy, const T* y, std::int64_t n,
                                 std::int64_t stride, bool accumulate) {
  T dot = 0;
  for (std::int64_t j = 0; j < n; ++j) dot += dy[j * stride] * y[j * stride];
  for (std::int64_t j = 0; j < n; ++j) {
    const T v = y[j * stride] * (dy[j * stride] - dot);
    dx[j * stride] = accumulate ? dx[j * stride] + v : v;
  }
}

// y = (x − max) − log Σ_j exp(x_j − max), the log-sum-exp computed stably. The max is subtracted
// first: x − (max + log s) would round max + log s to max when max is large (|max| ≈ 1e3 in
// float32 already loses digits, and at 1e30 the result would be 0 instead of −log n).
template <class T>
inline void log_softmax_row(T* y, const T* x, std::int64_t n, std::int64_t stride) {
  T m = x[0];
  for (std::int64_t j = 1; j < n; ++j) m = std::max(m, x[j * stride]);
  T s = 0;
  for (std::int64_t j = 0; j < n; ++j) s += std::exp(x[j * stride] - m);
  const T log_s = std::log(s);
  for (std::int64_t j = 0; j < n; ++j) y[j * stride] = (x[j * stride] - m) - log_s;
}

// dx = dy − softmax(x) Σ_j dy_j, with softmax(x) = exp(y).
template <class T>
inline void log_softmax_row_backward(T* dx, const T* dy, const T* y, std::int64_t n,
                                     std::int64_t stride) {
  T total = 0;
  for (std::int64_t j = 0; j < n; ++j) total += dy[j * stride];
  for (std::int64_t j = 0; j < n; ++j)
    dx[j * stride] = dy[j * stride] - std::exp(y[j * stride]) * total;
}

// The tensor seen as (outer, n, inner) around dim: outer·inner rows of n elements, `inner` apart.
struct RowLayout {
  std::int64_t outer = 1, n = 1, inner = 1;
  std::int64_t rows() const { return outer * inner; }
  std::int64_t start(std::int64_t r) const { return (r / inner) * n * inner + r % inner; }
};

RowLayout row_layout(const Tensor& x, std::int64_t dim, const char* op) {
  check_float(x, op);
  const std::int64_t d = normalize_dim(dim, x.dim(), op);
  RowLayout L;
  for (std::int64_t e = 0; e < x.dim(); ++e) {
    if (e < d) L.outer *= x.shape()[e];
    else if (e == d) L.n = x.shape()[e];
    else L.inner *= x.shape()[e];
  }
  return L;
}

// Applies row_fn(row_start, stride) to every row of the layout, in parallel when large.
template <class RowFn>
void for_each_row(const RowLayout& L, RowFn&& row_fn) {
  if (L.n == 0) return;
  parallel_for(L.rows(), L.rows() * L.n > kParallelThreshold,
               [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) row_fn(L.start(r), L.inner);
  });
}

}  // namespace

// ---- the row kernels (contiguous rows) ----------------------------------------------------------

template <class T>
void softmax_rows_forward(T* y, const T* x, std::int64_t rows, std::int64_t n) {
  if (n == 0) return;
  parallel_for(rows, rows * n > kParallelThreshold, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) softmax_row(y + r * n, x + r * n, n, 1);
  });
}

template <class T>
void softmax_rows_backward(T* dx, const T* dy, const T* y, std::int64_t rows, std::int64_t n,
                           bool accumulate) {
  if (n == 0) return;
  parallel_for(rows, rows * n > kParallelThreshold, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r)
      softmax_row_backward(dx + r * n, dy + r * n, y + r * n, n, 1, accumulate);
  });
}

template void softmax_rows_forward<float>(float*, const float*, std::int64_t, std::int64_t);
template void softmax_rows_forward<double>(double*, const double*, std::int64_t, std::int64_t);
template void softmax_rows_backward<float>(float*, const float*, const float*, std::int64_t,
                                           std::int64_t, bool);
template void softmax_rows_backward<double>(double*, const double*, const double*, std::int64_t,
                                            std::int64_t, bool);

// ---- fused softmax: one node --------------------------------------------------------------------
//
// Forward, along one row:  y_i = exp(x_i) / Σ_k exp(x_k).
// Jacobian:  ∂y_i/∂x_j = y_i (δ_ij − y_j).
// Backward:  dx_j = Σ_i dy_i ∂y_i/∂x_j = y_j dy_j − y_j Σ_i dy_i y_i = y_j (dy_j − ⟨dy, y⟩).
// So backward needs only the output y (saved), not x, and costs two passes over the row.
Tensor softmax(const Tensor& x, std::int64_t dim) {
  const RowLayout L = row_layout(x, dim, "softmax");
  Tensor out = Tensor::empty_like(x);
  dispatch_float(x.dtype(), "softmax", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* py = out.data<T>();
    if (L.inner == 1) {  // softmax over the last dim: contiguous rows
      softmax_rows_forward(py, px, L.rows(), L.n);
    } else {
      for_each_row(L, [&](std::int64_t s, std::int64_t stride) {
        softmax_row(py + s, px + s, L.n, stride);
      });
    }
  });
  Tensor y = out.detach();  // saved: the output (a handle without a graph node: no cycle)
  return record(out, "softmax", {x}, [y, L](const Tensor& g) -> std::vector<Tensor> {
    Tensor dx = Tensor::empty_like(g);
    dispatch_float(g.dtype(), "softmax backward", [&](auto tag) {
      using T = decltype(tag);
      const T *dy = g.data<T>(), *py = y.data<T>();
      T* pdx = dx.data<T>();
      if (L.inner == 1) {
        softmax_rows_backward(pdx, dy, py, L.rows(), L.n, /*accumulate=*/false);
      } else {
        for_each_row(L, [&](std::int64_t s, std::int64_t stride) {
          softmax_row_backward(pdx + s, dy + s, py + s, L.n, stride, /*accumulate=*/false);
        });
      }
    });
    return {dx};
  }, {y});
}

// ---- fused log_softmax: one node ----------------------------------------------------------------
//
// Forward, along one row:  y_i = x_i − log Σ_k exp(x_k).
// Jacobian:  ∂y_i/∂x_j = δ_ij − softmax(x)_j.
// Backward:  dx_j = Σ_i dy_i (δ_ij − softmax_j) = dy_j − softmax_j Σ_i dy_i,
// with softmax_j = exp(y_j) recovered from the saved output.
Tensor log_softmax(const Tensor& x, std::int64_t dim) {
  const RowLayout L = row_layout(x, dim, "log_softmax");
  Tensor out = Tensor::empty_like(x);
  dispatch_float(x.dtype(), "log_softmax", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* py = out.data<T>();
    for_each_row(L, [&](std::int64_t s, std::int64_t stride) {
      log_softmax_row(py + s, px + s, L.n, stride);
    });
  });
  Tensor y = out.detach();  // saved: the output
  return record(out, "log_softmax", {x}, [y, L](const Tensor& g) -> std::vector<Tensor> {
    Tensor dx = Tensor::empty_like(g);
    dispatch_float(g.dtype(), "log_softmax backward", [&](auto tag) {
      using T = decltype(tag);
      const T *dy = g.data<T>(), *py = y.data<T>();
      T* pdx = dx.data<T>();
      for_each_row(L, [&](std::int64_t s, std::int64_t stride) {
        log_softmax_row_backward(pdx + s, dy + s, py + s, L.n, stride);
      });
    });
    return {dx};
  }, {y});
}

// ---- composed from primitives: autograd derives the gradient ------------------------------------
//
// The max is detached: softmax(x − c) = softmax(x) for any constant c, so no gradient flows
// through it in exact arithmetic, and cutting it keeps the (kinked) max out of the graph.

Tensor softmax_composed(const Tensor& x, std::int64_t dim) {
  check_float(x, "softmax_composed");
  Tensor m = max(x.detach(), {dim}, /*keepdim=*/true);  // (..., 1, ...)
  Tensor e = exp(x - m);
  return e / sum(e, {dim}, /*keepdim=*/true);
}

Tensor log_softmax_composed(const Tensor& x, std::int64_t dim) {
  check_float(x, "log_softmax_composed");
  Tensor z = x - max(x.detach(), {dim}, /*keepdim=*/true);
  return z - log(sum(exp(z), {dim}, /*keepdim=*/true));
}

}  // namespace uwaga::nn
