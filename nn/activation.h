#pragma once
// Activation modules: thin wrappers over core/gelu.h and core/elementwise.h, for building MLPs.
#include "nn/module.h"

namespace uwaga::nn {

class GELU : public Module {  // x Φ(x), exact erf form; one fused node
 public:
  Tensor forward(const Tensor& x) const;
};

class ReLU : public Module {  // max(x, 0)
 public:
  Tensor forward(const Tensor& x) const;
};

}  // namespace uwaga::nn
