#pragma once
// GELU, the exact (erf) form: gelu(x) = x Φ(x) = x · ½ (1 + erf(x / √2)).
//   gelu:          one node with the hand-derived backward  d/dx = Φ(x) + x φ(x),
//                  φ(x) = exp(−x²/2) / √(2π)
//   gelu_composed: x · 0.5 · (1 + erf(x / √2)) from mul, add and the primitive erf
//                  (core/elementwise.h), whose own rule is d/du erf(u) = 2/√π · exp(−u²);
//                  autograd derives the rest.
//   GELU:          the module, for building MLPs.
// GPT-2 (and BERT) use the tanh approximation instead, which their weights were trained with:
//   gelu_tanh(x) = ½ x (1 + tanh(√(2/π) (x + 0.044715 x³)))
//   gelu_tanh:          one node with the hand-derived backward (gelu.cpp)
//   gelu_tanh_composed: the same from mul, add and the primitive tanh
// The two forms differ by at most about 3e-4 (near x = ±2): enough to matter when loading
// weights trained with one of them, too little to matter for training from scratch.
#include "core/tensor.h"
#include "nn/module.h"

namespace uwaga::nn {

Tensor gelu(const Tensor& x);
Tensor gelu_composed(const Tensor& x);
Tensor gelu_tanh(const Tensor& x);
Tensor gelu_tanh_composed(const Tensor& x);

// Which GELU: the exact erf form, or the tanh approximation (PyTorch's approximate="tanh").
enum class GeluApproximation { none, tanh };

class GELU : public Module {  // one fused node, of the form chosen
 public:
  explicit GELU(GeluApproximation approximate = GeluApproximation::none)
      : approximate(approximate) {}
  Tensor forward(const Tensor& x) const;
  GeluApproximation approximate;
};

}  // namespace uwaga::nn
