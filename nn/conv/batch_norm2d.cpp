#include "nn/conv/batch_norm2d.h"

#include <cmath>
#include <vector>

#include "core/elementwise.h"
#include "core/graph.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "core/threads.h"
#include "nn/init.h"

namespace uwaga::nn {

// A channel's n = B·S values lie in B planes of S, one per image. Channels are independent and
// run in parallel; each sums its planes in order, in double (n reaches 10⁵ for a feature map of
// a batch), so the statistics do not depend on the thread count. Two passes: the mean, then
// the squared deviations from it.
template <class T>
void batch_norm2d_statistics(T* mean, T* var, const T* x, std::int64_t B, std::int64_t C,
                             std::int64_t S) {
  const double n = static_cast<double>(B * S);
  parallel_for(C, B * C * S > kParallelThreshold, [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t c = c0; c < c1; ++c) {
      double total = 0;
      for (std::int64_t b = 0; b < B; ++b) {
        const T* plane = x + (b * C + c) * S;  // (S)
#pragma omp simd reduction(+ : total)
        for (std::int64_t k = 0; k < S; ++k) total += static_cast<double>(plane[k]);
      }
      const double m = total / n;
      double squares = 0;
      for (std::int64_t b = 0; b < B; ++b) {
        const T* plane = x + (b * C + c) * S;
#pragma omp simd reduction(+ : squares)
        for (std::int64_t k = 0; k < S; ++k) {
          const double d = static_cast<double>(plane[k]) - m;
          squares += d * d;
        }
      }
      mean[c] = static_cast<T>(m);
      var[c] = static_cast<T>(squares / n);
    }
  });
}

// y = γ (x − μ) rstd + β, plane by plane.
template <class T>
void batch_norm2d_forward(T* y, const T* x, const T* weight, const T* bias, const T* mean,
                          const T* rstd, std::int64_t B, std::int64_t C, std::int64_t S) {
  parallel_for(B * C, B * C * S > kParallelThreshold, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t p = p0; p < p1; ++p) {
      const std::int64_t c = p % C;
      const T m = mean[c], scale = weight[c] * rstd[c], shift = bias[c];
      const T* xp = x + p * S;
      T* yp = y + p * S;
#pragma omp simd
      for (std::int64_t k = 0; k < S; ++k) yp[k] = (xp[k] - m) * scale + shift;
    }
  });
}

// In the forward pass  x̂ = (x − μ)·rstd  and  y = γ x̂ + β, per channel over its n values. So
//   dβ = Σ dy,   dγ = Σ dy ⊙ x̂,   dx̂ = γ dy.
// Eval mode: μ and rstd are the running statistics, constants, so  dx = γ rstd dy.
// Training mode: μ and rstd are the batch's and depend on every x of the channel, exactly as
// LayerNorm's depend on every x of the row (nn/layer_norm.cpp derives it):
//   dx = rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ ⊙ x̂))
// and with dx̂ = γ dy, mean(dx̂) = γ dβ/n and mean(dx̂ ⊙ x̂) = γ dγ/n:
//   dx = γ rstd · (dy − dβ/n − x̂ dγ/n)
// One pass per channel gathers dβ and dγ (in double, planes in order), a second writes dx.
template <class T>
void batch_norm2d_backward(T* dx, T* dweight, T* dbias, const T* dy, const T* x,
                           const T* weight, const T* mean, const T* rstd, std::int64_t B,
                           std::int64_t C, std::int64_t S, bool batch_statistics) {
  const double n = static_cast<double>(B * S);
  parallel_for(C, B * C * S > kParallelThreshold, [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t c = c0; c < c1; ++c) {
      const T m = mean[c], s = rstd[c];
      double sum_dy = 0, sum_dy_xhat = 0;  // dβ, dγ
      for (std::int64_t b = 0; b < B; ++b) {
        const T* xp = x + (b * C + c) * S;
        const T* gp = dy + (b * C + c) * S;
#pragma omp simd reduction(+ : sum_dy, sum_dy_xhat)
        for (std::int64_t k = 0; k < S; ++k) {
          sum_dy += static_cast<double>(gp[k]);
          sum_dy_xhat += static_cast<double>(gp[k]) * static_cast<double>((xp[k] - m) * s);
        }
      }
      if (dbias) dbias[c] = static_cast<T>(sum_dy);
      if (dweight) dweight[c] = static_cast<T>(sum_dy_xhat);
      if (!dx) continue;
      const T scale = weight[c] * s;  // γ rstd
      const T mean_dy = batch_statistics ? static_cast<T>(sum_dy / n) : T(0);
      const T mean_dy_xhat = batch_statistics ? static_cast<T>(sum_dy_xhat / n) : T(0);
      for (std::int64_t b = 0; b < B; ++b) {
        const T* xp = x + (b * C + c) * S;
        const T* gp = dy + (b * C + c) * S;
        T* dxp = dx + (b * C + c) * S;
#pragma omp simd
        for (std::int64_t k = 0; k < S; ++k)
          dxp[k] = scale * (gp[k] - mean_dy - (xp[k] - m) * s * mean_dy_xhat);
      }
    }
  });
}

template void batch_norm2d_statistics<float>(float*, float*, const float*, std::int64_t,
                                             std::int64_t, std::int64_t);
template void batch_norm2d_statistics<double>(double*, double*, const double*, std::int64_t,
                                              std::int64_t, std::int64_t);
template void batch_norm2d_forward<float>(float*, const float*, const float*, const float*,
                                          const float*, const float*, std::int64_t,
                                          std::int64_t, std::int64_t);
template void batch_norm2d_forward<double>(double*, const double*, const double*, const double*,
                                           const double*, const double*, std::int64_t,
                                           std::int64_t, std::int64_t);
template void batch_norm2d_backward<float>(float*, float*, float*, const float*, const float*,
                                           const float*, const float*, const float*,
                                           std::int64_t, std::int64_t, std::int64_t, bool);
template void batch_norm2d_backward<double>(double*, double*, double*, const double*,
                                            const double*, const double*, const double*,
                                            const double*, std::int64_t, std::int64_t,
                                            std::int64_t, bool);

namespace {

void check_eps(double eps, const char* who) {
  // With ε = 0 a constant channel would give rstd = 1/0 and x̂ = 0 · ∞ = NaN.
  if (!(eps > 0) || !std::isfinite(eps)) fail(who, ": eps must be a finite number > 0, got ", eps);
}

void check_momentum(double momentum, const char* who) {
  if (!(momentum >= 0 && momentum <= 1))
    fail(who, ": momentum must be in [0, 1], got ", momentum);
}

void check_batch_norm2d_args(const Tensor& x, const Tensor& weight, const Tensor& bias,
                             double eps, const char* op) {
  check_eps(eps, op);
  check_float(x, op);
  if (x.dim() != 4) fail(op, ": input must be (B, C, H, W), got ", shape_str(x.shape()));
  const std::int64_t C = x.size(1);
  for (const Tensor* t : {&weight, &bias}) {
    check_float(*t, op);
    check_same_dtype(x, *t, op);
  }
  if (weight.shape() != Shape{C} || bias.shape() != Shape{C})
    fail(op, ": input ", shape_str(x.shape()), " has ", C, " channels but weight is ",
         shape_str(weight.shape()), " and bias ", shape_str(bias.shape()));
}

}  // namespace

Tensor batch_norm2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
                    const Tensor& running_mean, const Tensor& running_var, bool training,
                    double momentum, double eps) {
  const char* op = "batch_norm2d";
  check_batch_norm2d_args(x, weight, bias, eps, op);
  check_momentum(momentum, op);
  const std::int64_t B = x.size(0), C = x.size(1), S = x.size(2) * x.size(3);
  if (running_mean.defined() != running_var.defined())
    fail(op, ": running_mean and running_var must both be given or both be left out");
  const bool running = running_mean.defined();
  if (running) {
    for (const Tensor* t : {&running_mean, &running_var}) {
      check_float(*t, op);
      check_same_dtype(x, *t, op);
    }
    if (running_mean.shape() != Shape{C} || running_var.shape() != Shape{C})
      fail(op, ": input ", shape_str(x.shape()), " has ", C, " channels but running_mean is ",
           shape_str(running_mean.shape()), " and running_var ", shape_str(running_var.shape()));
  }
  if (!training && !running)
    fail(op, ": eval mode normalises with the running statistics, but none were given");
  if (training && B * S < 2)
    fail(op, ": training needs more than one value per channel to estimate its variance, got "
         "input ", shape_str(x.shape()));
  init_threads();

  Tensor mean = Tensor::empty({C}, x.dtype()), rstd = Tensor::empty({C}, x.dtype());  // (C)
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  dispatch_float(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    T *pm = mean.data<T>(), *ps = rstd.data<T>();
    if (training) {
      std::vector<T> var(static_cast<std::size_t>(C));  // σ², biased
      batch_norm2d_statistics<T>(pm, var.data(), x.data<T>(), B, C, S);
      for (std::int64_t c = 0; c < C; ++c)
        ps[c] = static_cast<T>(1.0 / std::sqrt(static_cast<double>(var[c]) + eps));
      if (running) {  // the running statistics follow the batch's, σ² made unbiased
        T *rm = Tensor(running_mean).data<T>(), *rv = Tensor(running_var).data<T>();
        const double unbias = static_cast<double>(B * S) / static_cast<double>(B * S - 1);
        for (std::int64_t c = 0; c < C; ++c) {
          rm[c] = static_cast<T>((1 - momentum) * rm[c] + momentum * pm[c]);
          rv[c] = static_cast<T>((1 - momentum) * rv[c] + momentum * var[c] * unbias);
        }
        Tensor(running_mean).bump_version();
        Tensor(running_var).bump_version();
      }
    } else {
      const T *rm = running_mean.data<T>(), *rv = running_var.data<T>();
      for (std::int64_t c = 0; c < C; ++c) {
        pm[c] = rm[c];
        ps[c] = static_cast<T>(1.0 / std::sqrt(static_cast<double>(rv[c]) + eps));
      }
    }
    batch_norm2d_forward<T>(y.data<T>(), x.data<T>(), weight.data<T>(), bias.data<T>(), pm, ps,
                            B, C, S);
  });
  return record(y, "batch_norm2d", {x, weight, bias},
                [x, weight, bias, mean, rstd, training, B, C, S](const Tensor& g)
                    -> std::vector<Tensor> {
    Tensor dx, dw, db;
    if (x.requires_grad()) dx = Tensor::empty(x.shape(), x.dtype());
    if (weight.requires_grad()) dw = Tensor::empty(weight.shape(), x.dtype());
    if (bias.requires_grad()) db = Tensor::empty(bias.shape(), x.dtype());
    dispatch_float(g.dtype(), "batch_norm2d", [&](auto tag) {
      using T = decltype(tag);
      batch_norm2d_backward<T>(dx.defined() ? dx.data<T>() : nullptr,
                               dw.defined() ? dw.data<T>() : nullptr,
                               db.defined() ? db.data<T>() : nullptr, g.data<T>(), x.data<T>(),
                               weight.data<T>(), mean.data<T>(), rstd.data<T>(), B, C, S,
                               training);
    });
    return {dx, dw, db};
  });
}

Tensor batch_norm2d_composed(const Tensor& x, const Tensor& weight, const Tensor& bias,
                             double eps) {
  check_batch_norm2d_args(x, weight, bias, eps, "batch_norm2d_composed");
  const Shape per_channel = {1, x.size(1), 1, 1};
  Tensor mu = mean(x, {0, 2, 3}, true);                    // μ (1, C, 1, 1)
  Tensor centered = x - mu;                                // x − μ
  Tensor variance = mean(centered * centered, {0, 2, 3}, true);
  Tensor xhat = centered / sqrt(variance + eps);           // (x − μ)/√(σ² + ε)
  return xhat * reshape(weight, per_channel) + reshape(bias, per_channel);  // γ x̂ + β
}

void BatchNorm2dOptions::validate() const {
  check_eps(eps, "BatchNorm2dOptions");
  check_momentum(momentum, "BatchNorm2dOptions");
}

BatchNorm2d::BatchNorm2d(std::int64_t channels, BatchNorm2dOptions o) : options(o) {
  if (channels < 1) fail("BatchNorm2d: channels must be positive, got ", channels);
  o.validate();
  weight = register_parameter("weight", {channels}, init::ones);
  bias = register_parameter("bias", {channels}, init::zeros);
  running_mean = register_buffer("running_mean", {channels}, init::zeros);
  running_var = register_buffer("running_var", {channels}, init::ones);
  num_batches_tracked = register_buffer("num_batches_tracked", {}, init::zeros, DType::Int64);
}

Tensor BatchNorm2d::forward(const Tensor& x) {
  if (!is_training())
    return batch_norm2d(x, weight, bias, running_mean, running_var, false, options.momentum,
                        options.eps);
  if (!updates_buffers())  // a replica: the module it reads its buffers from updates them
    return batch_norm2d(x, weight, bias, Tensor(), Tensor(), true, options.momentum, options.eps);
  Tensor y = batch_norm2d(x, weight, bias, running_mean, running_var, true, options.momentum,
                          options.eps);
  num_batches_tracked.data<std::int64_t>()[0] += 1;
  num_batches_tracked.bump_version();
  return y;
}

}  // namespace uwaga::nn
