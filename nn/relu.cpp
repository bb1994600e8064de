#include "nn/relu.h"

#include "core/elementwise.h"

namespace uwaga::nn {

Tensor ReLU::forward(const Tensor& x) const { return relu(x); }

}  // namespace uwaga::nn
