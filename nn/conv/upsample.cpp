#include "nn/conv/upsample.h"

#include <algorithm>
#include <cmath>

#include "core/graph.h"
#include "core/matmul.h"
#include "core/shape_ops.h"
#include "core/threads.h"

namespace uwaga::nn {

BilinearTaps bilinear_taps(std::int64_t size, std::int64_t factor) {
  const std::int64_t out = size * factor;
  BilinearTaps t;
  t.i0.resize(out), t.i1.resize(out), t.w0.resize(out), t.w1.resize(out);
  const double scale = 1.0 / static_cast<double>(factor);  // PyTorch's, from scale_factor
  for (std::int64_t d = 0; d < out; ++d) {
    const double src = std::max(scale * (static_cast<double>(d) + 0.5) - 0.5, 0.0);
    const std::int64_t i0 = std::min(static_cast<std::int64_t>(src), size - 1);  // ⌊src⌋, src ≥ 0
    t.i0[d] = i0;
    t.i1[d] = std::min(i0 + 1, size - 1);
    t.w1[d] = src - static_cast<double>(i0);
    t.w0[d] = 1.0 - t.w1[d];
  }
  return t;
}

namespace {

void check_upsample_args(const Tensor& x, std::int64_t factor, const char* op) {
  check_float(x, op);
  if (x.dim() != 4) fail(op, ": input must be (B, C, H, W), got ", shape_str(x.shape()));
  if (factor < 1)
    fail(op, ": factor must be an integer ≥ 1, got ", factor, " (input ", shape_str(x.shape()),
         ")");
  // An output side of 2³¹ pixels is a mistyped factor (and H·factor could overflow).
  if (x.size(2) > (std::int64_t(1) << 31) / factor || x.size(3) > (std::int64_t(1) << 31) / factor)
    fail(op, ": input ", shape_str(x.shape()), " upsampled by ", factor, " is too large");
}

// Both axes' taps, as T, for the kernels.
template <class T>
struct Taps2d {
  BilinearTaps rows, cols;
  std::vector<T> a0, a1, b0, b1;  // row weights λ0, λ1 and column weights μ0, μ1
  Taps2d(std::int64_t H, std::int64_t W, std::int64_t factor)
      : rows(bilinear_taps(H, factor)), cols(bilinear_taps(W, factor)) {
    a0.assign(rows.w0.begin(), rows.w0.end()), a1.assign(rows.w1.begin(), rows.w1.end());
    b0.assign(cols.w0.begin(), cols.w0.end()), b1.assign(cols.w1.begin(), cols.w1.end());
  }
};

// Every (B, C) plane on its own; planes run in parallel. The map is separable,
// Y = A_H · X · A_Wᵀ, so each output row d is built in two steps: first the two input rows it
// reads are mixed, a whole row at a time (vectorised),
//   r[j] = λ0(d) x[i0(d), j] + λ1(d) x[i1(d), j]          (W values)
// then r is interpolated along the row:
//   y[d, e] = μ0(e) r[j0(e)] + μ1(e) r[j1(e)]
// — the 2-D formula of the header, with 4 multiplies per output instead of 6.
template <class T>
void upsample_forward(T* y, const T* x, std::int64_t planes, std::int64_t H, std::int64_t W,
                      const Taps2d<T>& t) {
  const std::int64_t Ho = static_cast<std::int64_t>(t.a0.size());
  const std::int64_t Wo = static_cast<std::int64_t>(t.b0.size());
  const std::int64_t* j0 = t.cols.i0.data();
  const std::int64_t* j1 = t.cols.i1.data();
  const bool worth_forking = planes * Ho * Wo > kParallelThreshold;
  parallel_for(planes, worth_forking, [&](std::int64_t p0, std::int64_t p1) {
    std::vector<T> row(static_cast<std::size_t>(W));  // r, one per thread
    T* r = row.data();
    for (std::int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * H * W;  // (H, W)
      T* yp = y + p * Ho * Wo;      // (H·f, W·f)
      for (std::int64_t d = 0; d < Ho; ++d) {
        const T* x0 = xp + t.rows.i0[d] * W;
        const T* x1 = xp + t.rows.i1[d] * W;
        const T a0 = t.a0[d], a1 = t.a1[d];
#pragma omp simd
        for (std::int64_t j = 0; j < W; ++j) r[j] = a0 * x0[j] + a1 * x1[j];
        T* out = yp + d * Wo;
        for (std::int64_t e = 0; e < Wo; ++e) out[e] = t.b0[e] * r[j0[e]] + t.b1[e] * r[j1[e]];
      }
    }
  });
}

// In the forward pass Y = A_H · X · A_Wᵀ (both steps linear), so dX = A_Hᵀ · dY · A_W, and
// row by row the two steps run backwards:
//   dr[j] = Σ_e dy[d, e] (μ0(e) [j = j0(e)] + μ1(e) [j = j1(e)])     each output back to its two
//   dx[i0(d), :] += λ0(d) dr,   dx[i1(d), :] += λ1(d) dr               columns, then its two rows
// (at the clamped edges i0 = i1 and both shares land on one pixel). Within a plane the rows are
// visited in order, so the sums do not depend on the thread count.
template <class T>
void upsample_backward(T* dx, const T* dy, std::int64_t planes, std::int64_t H, std::int64_t W,
                       const Taps2d<T>& t) {
  const std::int64_t Ho = static_cast<std::int64_t>(t.a0.size());
  const std::int64_t Wo = static_cast<std::int64_t>(t.b0.size());
  const std::int64_t* j0 = t.cols.i0.data();
  const std::int64_t* j1 = t.cols.i1.data();
  const bool worth_forking = planes * Ho * Wo > kParallelThreshold;
  parallel_for(planes, worth_forking, [&](std::int64_t p0, std::int64_t p1) {
    std::vector<T> row(static_cast<std::size_t>(W));  // dr, one per thread
    T* dr = row.data();
    for (std::int64_t p = p0; p < p1; ++p) {
      T* dxp = dx + p * H * W;  // (H, W)
      std::fill(dxp, dxp + H * W, T(0));
      const T* g = dy + p * Ho * Wo;  // (H·f, W·f)
      for (std::int64_t d = 0; d < Ho; ++d) {
        const T* gd = g + d * Wo;
        std::fill(dr, dr + W, T(0));
        for (std::int64_t e = 0; e < Wo; ++e) {
          dr[j0[e]] += t.b0[e] * gd[e];
          dr[j1[e]] += t.b1[e] * gd[e];
        }
        T* dx0 = dxp + t.rows.i0[d] * W;
        T* dx1 = dxp + t.rows.i1[d] * W;
        const T a0 = t.a0[d], a1 = t.a1[d];
#pragma omp simd
        for (std::int64_t j = 0; j < W; ++j) dx0[j] += a0 * dr[j];
#pragma omp simd
        for (std::int64_t j = 0; j < W; ++j) dx1[j] += a1 * dr[j];
      }
    }
  });
}

}  // namespace

Tensor upsample_bilinear(const Tensor& x, std::int64_t factor) {
  check_upsample_args(x, factor, "upsample_bilinear");
  init_threads();
  const std::int64_t B = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  Tensor y = Tensor::empty({B, C, H * factor, W * factor}, x.dtype());
  dispatch_float(x.dtype(), "upsample_bilinear", [&](auto tag) {
    using T = decltype(tag);
    upsample_forward<T>(y.data<T>(), x.data<T>(), B * C, H, W, Taps2d<T>(H, W, factor));
  });
  return record(y, "upsample_bilinear", {x},
                [x, factor, B, C, H, W](const Tensor& dy) -> std::vector<Tensor> {
    Tensor dx = Tensor::empty(x.shape(), x.dtype());
    dispatch_float(dy.dtype(), "upsample_bilinear", [&](auto tag) {
      using T = decltype(tag);
      upsample_backward<T>(dx.data<T>(), dy.data<T>(), B * C, H, W, Taps2d<T>(H, W, factor));
    });
    return {dx};
  });
}

namespace {
// A (size·factor, size): row d holds w0[d] at column i0[d] and w1[d] at i1[d] (added up where
// the two coincide), so A · v interpolates a vector v along the axis.
Tensor interpolation_matrix(std::int64_t size, std::int64_t factor, DType dtype) {
  const BilinearTaps t = bilinear_taps(size, factor);
  const std::int64_t out = size * factor;
  std::vector<double> a(static_cast<std::size_t>(out * size), 0.0);
  for (std::int64_t d = 0; d < out; ++d) {
    a[d * size + t.i0[d]] += t.w0[d];
    a[d * size + t.i1[d]] += t.w1[d];
  }
  return Tensor::from_vector(a, {out, size}, dtype);
}
}  // namespace

// Bilinear interpolation is separable: interpolating every column and then every row of the
// result is the 2-D formula of the header. As matrices, Y = A_H · X · A_Wᵀ for each plane X.
Tensor upsample_bilinear_composed(const Tensor& x, std::int64_t factor) {
  check_upsample_args(x, factor, "upsample_bilinear_composed");
  const Tensor A_H = interpolation_matrix(x.size(2), factor, x.dtype());  // (H·f, H)
  const Tensor A_W = interpolation_matrix(x.size(3), factor, x.dtype());  // (W·f, W)
  // (B, C, H, W) @ (W, W·f) -> (B, C, H, W·f);  (H·f, H) @ that -> (B, C, H·f, W·f)
  return matmul(A_H, matmul(x, transpose(A_W, 0, 1)));
}

}  // namespace uwaga::nn
