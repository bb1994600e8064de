#pragma once
// GELU, the exact (erf) form: gelu(x) = x Φ(x) = x · ½ (1 + erf(x / √2)).
//   gelu:          one node with the hand-derived backward  d/dx = Φ(x) + x φ(x),
//                  φ(x) = exp(−x²/2) / √(2π)
//   gelu_composed: x · 0.5 · (1 + erf(x / √2)) from mul, add and the primitive erf
//                  (core/elementwise.h), whose own rule is d/du erf(u) = 2/√π · exp(−u²);
//                  autograd derives the rest.
//   GELU:          the module, for building MLPs.
#include "core/tensor.h"
#include "nn/module.h"

namespace uwaga::nn {

Tensor gelu(const Tensor& x);
Tensor gelu_composed(const Tensor& x);

class GELU : public Module {  // x Φ(x), exact erf form; one fused node
 public:
  Tensor forward(const Tensor& x) const;
};

}  // namespace uwaga::nn
