#pragma once
// LayerNorm over the last dim, each vector on its own (SEEDS §5):
//   μ = (1/d) Σ_j x_j,   σ = √((1/d) Σ_j (x_j − μ)² + ε),   LN(x) = γ ⊙ (x − μ)/σ + β
// One lecture note writes μ and σ as plain sums and γ, β as scalars; this is the standard form
// (means over the d features, per-feature vectors γ and β), as in PyTorch. ε = 1e-5.
//
// layer_norm is one autograd node with the hand-derived backward of nn/layer_norm.cpp (derived
// there beside its plain loop); layer_norm_composed builds the same function from mean, sub, mul,
// sqrt, so autograd derives it — tests compare them.
#include "core/random.h"
#include "nn/module.h"

namespace uwaga::nn {

// What the backward pass needs from the forward pass, one entry per row (vector).
struct LayerNormSaved {
  Tensor mean;  // (rows,)  μ
  Tensor rstd;  // (rows,)  1/σ
};

// x (..., d), weight γ (d), bias β (d)
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);
Tensor layer_norm_composed(const Tensor& x, const Tensor& weight, const Tensor& bias,
                           double eps = 1e-5);

// The plain loops, one row after the other as the formulas read (rows × d, contiguous): what a
// student steps through. layer_norm runs the fast kernels of nn/layer_norm_kernels.h instead,
// the same numbers up to rounding. Backward writes dx, dweight, dbias (null: not wanted).
template <class T>
void layer_norm_forward_reference(T* out, T* mean, T* rstd, const T* x, const T* weight,
                                  const T* bias, std::int64_t rows, std::int64_t d, double eps);
template <class T>
void layer_norm_backward_reference(T* dx, T* dweight, T* dbias, const T* dout, const T* x,
                                   const T* weight, const T* mean, const T* rstd,
                                   std::int64_t rows, std::int64_t d);

// Init: γ = 1, β = 0.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(std::int64_t dim, double eps = 1e-5);
  Tensor forward(const Tensor& x) const;

  Tensor weight;  // γ (dim)
  Tensor bias;    // β (dim)
  double eps;
};

}  // namespace uwaga::nn
