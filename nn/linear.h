#pragma once
// Linear: y = x Wᵀ + b, W (out, in), b (out) — PyTorch's layout, so state dicts line up.
// Init: W ~ trunc-normal(0, 0.02) as in ViT, b = 0.
#include "core/random.h"
#include "nn/model.h"

namespace uwaga::nn {

class Linear : public Model {
 public:
  Linear(std::int64_t in_features, std::int64_t out_features, Generator& gen, bool bias = true);
  Tensor forward(const Tensor& x) const;  // (..., in) -> (..., out)
  Tensor forward_batch(const std::vector<Tensor>& inputs) override;  // {x}
  std::shared_ptr<Model> replica() const override;

  Tensor weight;  // (out, in)
  Tensor bias;    // (out) or undefined
};

}  // namespace uwaga::nn
