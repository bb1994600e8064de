#pragma once
// Draws the autograd graph behind a tensor as Graphviz DOT: one box per op (its name and output
// shape), one ellipse per leaf (its name, shape, and for small tensors values and gradients).
// Render with `dot -Tpng graph.dot -o graph.png`.
#include <string>

#include "core/tensor.h"

namespace uwaga {

std::string to_dot(const Tensor& root, int max_values = 6);

}  // namespace uwaga
