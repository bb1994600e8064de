#pragma once
// Linear: y = x Wᵀ + b, W (out, in), b (out) — PyTorch's layout, so state dicts line up.
// Init: W ~ trunc-normal(0, 0.02) as in ViT, b = 0.
#include "core/random.h"
#include "nn/module.h"

namespace uwaga::nn {

class Linear : public Module {
 public:
  Linear(std::int64_t in_features, std::int64_t out_features, Generator& gen, bool bias = true);
  Tensor forward(const Tensor& x) const;  // (..., in) -> (..., out)

  Tensor weight;  // (out, in)
  Tensor bias;    // (out) or undefined
};

}  // namespace uwaga::nn
