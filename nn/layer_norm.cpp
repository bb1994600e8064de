#include "nn/layer_norm.h"

#include <algorithm>
#include <cmath>

#include "core/elementwise.h"
#include "core/graph.h"
#include "core/reduction.h"
#include "nn/init.h"
#include "nn/layer_norm_kernels.h"

namespace uwaga::nn {

// ---- the plain loops (llm.c's layernorm_forward and layernorm_backward) ------------------------
//
// Each row of d values is normalised on its own:
//   μ = (1/d) Σ_j x_j,   σ² = (1/d) Σ_j (x_j − μ)²,   rstd = 1/√(σ² + ε)
//   x̂_j = (x_j − μ) · rstd,   y_j = γ_j x̂_j + β_j
// μ and rstd are saved for the backward pass. nn::layer_norm runs the same formulas in the fast
// kernels of nn/layer_norm_kernels.cpp; tests/nn/test_layer_norm.cpp checks that the two agree.
template <class T>
void layer_norm_forward_reference(T* out, T* mean, T* rstd, const T* x, const T* weight,
                                  const T* bias, std::int64_t rows, std::int64_t d, double eps) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;  // (d) this row's input
    T m = 0;                  // μ
    for (std::int64_t j = 0; j < d; ++j) m += xr[j];
    m /= static_cast<T>(d);
    T v = 0;                  // σ², the variance without Bessel's correction
    for (std::int64_t j = 0; j < d; ++j) v += (xr[j] - m) * (xr[j] - m);
    v /= static_cast<T>(d);
    const T s = T(1) / std::sqrt(v + static_cast<T>(eps));  // rstd = 1/σ
    T* o = out + r * d;  // (d) this row's output
    for (std::int64_t j = 0; j < d; ++j) {
      const T xhat = (xr[j] - m) * s;     // normalised
      o[j] = weight[j] * xhat + bias[j];  // scaled and shifted
    }
    mean[r] = m;  // saved for the backward pass
    rstd[r] = s;
  }
}

// In the forward pass  x̂ = (x − μ)·rstd  and  y = γ ⊙ x̂ + β. So:
//   dβ = Σ_rows dy,   dγ = Σ_rows dy ⊙ x̂,   dx̂ = dy ⊙ γ
// μ and rstd depend on every x_j of the row: ∂μ/∂x_j = 1/d, ∂rstd/∂x_j = −rstd³ (x_j − μ)/d, so
//   ∂x̂_i/∂x_j = rstd (δ_ij − 1/d − x̂_i x̂_j / d)      (ε sits inside rstd; this is exact)
//   dx_j = Σ_i dx̂_i ∂x̂_i/∂x_j = rstd · (dx̂_j − mean(dx̂) − x̂_j · mean(dx̂ ⊙ x̂))
// dx, dweight and dbias are written, not accumulated into (null when not wanted).
template <class T>
void layer_norm_backward_reference(T* dx, T* dweight, T* dbias, const T* dout, const T* x,
                                   const T* weight, const T* mean, const T* rstd,
                                   std::int64_t rows, std::int64_t d) {
  if (dweight) std::fill_n(dweight, d, T(0));
  if (dbias) std::fill_n(dbias, d, T(0));
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;     // (d)
    const T* dy = dout + r * d;  // (d)
    const T m = mean[r], s = rstd[r];
    // First the two means over the row: mean(dx̂) and mean(dx̂ ⊙ x̂).
    T mean_dxhat = 0, mean_dxhat_xhat = 0;
    for (std::int64_t j = 0; j < d; ++j) {
      const T xhat = (xr[j] - m) * s;
      const T dxhat = dy[j] * weight[j];
      mean_dxhat += dxhat;
      mean_dxhat_xhat += dxhat * xhat;
    }
    mean_dxhat /= static_cast<T>(d);
    mean_dxhat_xhat /= static_cast<T>(d);
    // Then each feature: its dx, and its share of dγ and dβ.
    for (std::int64_t j = 0; j < d; ++j) {
      const T xhat = (xr[j] - m) * s;
      const T dxhat = dy[j] * weight[j];
      if (dx) dx[r * d + j] = s * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat);
      if (dweight) dweight[j] += dy[j] * xhat;
      if (dbias) dbias[j] += dy[j];
    }
  }
}

template void layer_norm_forward_reference<float>(float*, float*, float*, const float*,
                                                  const float*, const float*, std::int64_t,
                                                  std::int64_t, double);
template void layer_norm_forward_reference<double>(double*, double*, double*, const double*,
                                                   const double*, const double*, std::int64_t,
                                                   std::int64_t, double);
template void layer_norm_backward_reference<float>(float*, float*, float*, const float*,
                                                   const float*, const float*, const float*,
                                                   const float*, std::int64_t, std::int64_t);
template void layer_norm_backward_reference<double>(double*, double*, double*, const double*,
                                                    const double*, const double*,
                                                    const double*, const double*, std::int64_t,
                                                    std::int64_t);

// ---- the autograd node: the fast kernels, the backward recorded ---------------------------------
namespace {
void check_layer_norm_args(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  // With ε = 0 a constant row would give rstd = 1/0 and x̂ = 0 · ∞ = NaN.
  if (!(eps > 0) || !std::isfinite(eps))
    fail("layer_norm: eps must be a finite number > 0, got ", eps);
  check_float(x, "layer_norm");
  check_float(weight, "layer_norm");
  check_float(bias, "layer_norm");
  check_same_dtype(x, weight, "layer_norm");
  check_same_dtype(x, bias, "layer_norm");
  if (x.dim() < 1) fail("layer_norm: input must have at least one dim");
  const std::int64_t d = x.size(-1);
  if (weight.shape() != Shape{d} || bias.shape() != Shape{d})
    fail("layer_norm: input ", shape_str(x.shape()), " normalises ", d,
         " features but weight is ", shape_str(weight.shape()), " and bias ",
         shape_str(bias.shape()));
}
}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  check_layer_norm_args(x, weight, bias, eps);
  const std::int64_t d = x.size(-1), rows = d == 0 ? 0 : x.numel() / d;
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  LayerNormSaved saved{Tensor::empty({rows}, x.dtype()), Tensor::empty({rows}, x.dtype())};
  dispatch_float(x.dtype(), "layer_norm", [&](auto tag) {
    using T = decltype(tag);
    layer_norm_forward<T>(out.data<T>(), saved.mean.data<T>(), saved.rstd.data<T>(), x.data<T>(),
                          weight.data<T>(), bias.data<T>(), rows, d, eps);
  });
  return record(out, "layer_norm", {x, weight, bias},
                [x, weight, bias, saved, rows, d](const Tensor& g) -> std::vector<Tensor> {
    Tensor dx, dw, db;
    if (x.requires_grad()) dx = Tensor::empty(x.shape(), x.dtype());
    if (weight.requires_grad()) dw = Tensor::empty(weight.shape(), x.dtype());
    if (bias.requires_grad()) db = Tensor::empty(bias.shape(), x.dtype());
    dispatch_float(g.dtype(), "layer_norm", [&](auto tag) {
      using T = decltype(tag);
      layer_norm_backward<T>(dx.defined() ? dx.data<T>() : nullptr,
                             dw.defined() ? dw.data<T>() : nullptr,
                             db.defined() ? db.data<T>() : nullptr, g.data<T>(), x.data<T>(),
                             weight.data<T>(), saved.mean.data<T>(), saved.rstd.data<T>(), rows, d);
    });
    return {dx, dw, db};
  });
}

// ---- composed from primitives: autograd derives the gradient ------------------------------------

Tensor layer_norm_composed(const Tensor& x, const Tensor& weight, const Tensor& bias,
                           double eps) {
  check_layer_norm_args(x, weight, bias, eps);
  Tensor mu = mean(x, {-1}, true);                     // μ
  Tensor centered = x - mu;                            // x − μ
  Tensor variance = mean(centered * centered, {-1}, true);
  Tensor xhat = centered / sqrt(variance + eps);       // (x − μ)/σ
  return xhat * weight + bias;                         // γ ⊙ x̂ + β
}

LayerNorm::LayerNorm(std::int64_t dim, double eps_) : eps(eps_) {
  if (dim < 1) fail("LayerNorm: dim must be positive, got ", dim);
  if (!(eps_ > 0)) fail("LayerNorm: eps must be positive, got ", eps_);
  weight = register_parameter("weight", {dim}, init::ones);
  bias = register_parameter("bias", {dim}, init::zeros);
}

Tensor LayerNorm::forward(const Tensor& x) const { return layer_norm(x, weight, bias, eps); }

}  // namespace uwaga::nn
