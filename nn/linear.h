#pragma once
// Linear: y = x Wᵀ + b, W (out, in), b (out) — PyTorch's layout, so state dicts line up.
// Init: W ~ trunc-normal(0, 0.02) as in ViT, b = 0.
#include "core/random.h"
#include "nn/model.h"

namespace uwaga::nn {

struct LinearOptions {
  std::int64_t in = 0;   // in_features
  std::int64_t out = 0;  // out_features
  bool bias = true;      // add b (false: y = x Wᵀ, no "bias" parameter)

  // Throws an Error naming the offending field when the options cannot work.
  void validate() const;
};

class Linear : public Model {
 public:
  Linear(const LinearOptions& options, Generator& gen);
  Tensor forward(const Tensor& x) const;  // (..., in) -> (..., out)
  Tensor forward_batch(const std::vector<Tensor>& inputs) override;  // {x}
  std::shared_ptr<Model> replica() const override;

  const LinearOptions options;
  Tensor weight;  // (out, in)
  Tensor bias;    // (out) or undefined
};

}  // namespace uwaga::nn
