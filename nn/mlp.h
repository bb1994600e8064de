#pragma once
// MLP of the transformer block, applied to each vector on its own:
//   MLP(x) = fc2(GELU(fc1(x))),  fc1: dim -> hidden, fc2: hidden -> dim.
#include "nn/gelu.h"
#include "nn/linear.h"

namespace uwaga::nn {

struct MLPOptions {
  std::int64_t dim = 0;     // D, the width of the vectors in and out
  std::int64_t hidden = 0;  // fc1's output width (the blocks' mlp_dim)
  GeluApproximation gelu = GeluApproximation::none;

  // Throws an Error naming the offending field when the options cannot work.
  void validate() const;
};

class MLP : public Module {
 public:
  MLP(const MLPOptions& options, Generator& gen);
  Tensor forward(const Tensor& x) const;  // (..., dim) -> (..., dim)

  std::shared_ptr<Linear> fc1, fc2;
  GELU act;
};

}  // namespace uwaga::nn
