#pragma once
// ReLU as a module: max(x, 0), the primitive relu of core/elementwise.h.
#include "nn/module.h"

namespace uwaga::nn {

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& x) const;
};

}  // namespace uwaga::nn
