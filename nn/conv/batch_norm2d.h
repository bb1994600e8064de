#pragma once
// BatchNorm2d over NCHW feature maps, as PyTorch's nn.BatchNorm2d (affine, with running
// statistics). Each channel c is normalised over the batch and the positions, its n = B·H·W values:
//   μ_c = (1/n) Σ x,   σ²_c = (1/n) Σ (x − μ_c)²,   x̂ = (x − μ_c)/√(σ²_c + ε),   y = γ_c x̂ + β_c
// Training mode uses the batch's μ and σ², and the running statistics follow them (momentum m):
//   running_mean ← (1 − m)·running_mean + m·μ
//   running_var  ← (1 − m)·running_var  + m·σ²·n/(n − 1)     (unbiased, as PyTorch)
//   num_batches_tracked += 1
// Eval mode uses running_mean and running_var in place of μ and σ² — constants, for the gradient.
// ε = 1e-5 and m = 0.1 by default, as PyTorch.
//
// It is LayerNorm (nn/layer_norm.h) on the other axis: LayerNorm normalises each vector over its
// features, BatchNorm each feature (channel) over the batch; the forward formula and its backward
// are the same. batch_norm2d is one autograd node with the hand-derived backward of
// batch_norm2d.cpp; batch_norm2d_composed builds training mode's normalisation from mean, sub, mul
// and sqrt so autograd derives it — the tests compare them.
#include <cstdint>

#include "nn/module.h"

namespace uwaga::nn {

// x (B, C, H, W); weight γ, bias β (C). With `training`, batch statistics normalise x, and
// running_mean, running_var (C), when defined, are updated in place (undefined: left alone).
// Without it the running statistics normalise x and must be defined.
Tensor batch_norm2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
                    const Tensor& running_mean, const Tensor& running_var, bool training,
                    double momentum = 0.1, double eps = 1e-5);
// Training mode's output (batch statistics) from primitives.
Tensor batch_norm2d_composed(const Tensor& x, const Tensor& weight, const Tensor& bias,
                             double eps = 1e-5);

// Kernels over x (B, C, S), S = H·W positions, every array contiguous.
// The batch's statistics per channel: mean μ (C) and biased variance σ² (C), summed in double.
template <class T>
void batch_norm2d_statistics(T* mean, T* var, const T* x, std::int64_t B, std::int64_t C,
                             std::int64_t S);
// y = γ (x − mean)·rstd + β, with rstd = 1/√(σ² + ε) (C) of whichever statistics normalise.
template <class T>
void batch_norm2d_forward(T* y, const T* x, const T* weight, const T* bias, const T* mean,
                          const T* rstd, std::int64_t B, std::int64_t C, std::int64_t S);
// Writes dx, dweight, dbias (null: not wanted). batch_statistics: mean and rstd were the
// batch's own (training), so they depend on x; otherwise they were constants (eval).
template <class T>
void batch_norm2d_backward(T* dx, T* dweight, T* dbias, const T* dy, const T* x,
                           const T* weight, const T* mean, const T* rstd, std::int64_t B,
                           std::int64_t C, std::int64_t S, bool batch_statistics);

struct BatchNorm2dOptions {
  double eps = 1e-5;
  double momentum = 0.1;  // weight of the new batch in the running statistics

  // Throws an Error naming the offending field when the options cannot work.
  void validate() const;
};

// Parameters weight γ = 1, bias β = 0; buffers running_mean = 0, running_var = 1,
// num_batches_tracked = 0 (an int64 scalar) — PyTorch's names, values and dtypes, so state dicts
// line up. A module whose buffers alias another's (Module::alias_buffers: a DataParallel replica)
// normalises with its batch's statistics in training mode but leaves the running statistics to
// the module that owns them.
class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(std::int64_t channels, BatchNorm2dOptions options = {});
  Tensor forward(const Tensor& x);  // (B, C, H, W) -> (B, C, H, W)

  const BatchNorm2dOptions options;
  Tensor weight;               // γ (C)
  Tensor bias;                 // β (C)
  Tensor running_mean;         // (C) buffer
  Tensor running_var;          // (C) buffer
  Tensor num_batches_tracked;  // () int64 buffer: training forward passes seen
};

}  // namespace uwaga::nn
