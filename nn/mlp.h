#pragma once
// MLP of the transformer block, applied to each vector on its own:
//   MLP(x) = fc2(GELU(fc1(x))),  fc1: dim -> hidden, fc2: hidden -> dim.
#include "nn/gelu.h"
#include "nn/linear.h"

namespace uwaga::nn {

class MLP : public Module {
 public:
  MLP(std::int64_t dim, std::int64_t hidden, Generator& gen,
      GeluApproximation approximate = GeluApproximation::none);
  Tensor forward(const Tensor& x) const;  // (..., dim) -> (..., dim)

  std::shared_ptr<Linear> fc1, fc2;
  GELU act;
};

}  // namespace uwaga::nn
