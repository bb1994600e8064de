#pragma once
// Inverted dropout: in training each element is zeroed with probability p and the survivors are
// scaled by 1/(1 − p), so the expected value is unchanged and evaluation is the identity.
//   dropout: the op, one node with the hand-derived backward (the same mask);
//   Dropout: the module, which owns its generator, seeded at construction, so runs are
//            reproducible.
#include <cstdint>

#include "core/random.h"
#include "core/tensor.h"
#include "nn/module.h"

namespace uwaga::nn {

Tensor dropout(const Tensor& x, double p, bool training, Generator& gen);

// The mask dropout multiplies by, (shape) in `dtype`: each element 0 with probability p, else
// 1/(1 − p). Element i (in row-major order) takes the generator's i-th draw, so a caller that
// draws its mask here drops exactly the elements dropout() would (attention dropout's fused
// kernel, nn/attention_dropout.h).
Tensor dropout_mask(const Shape& shape, DType dtype, double p, Generator& gen);

class Dropout : public Module {
 public:
  explicit Dropout(double p, std::uint64_t seed = 0);
  Tensor forward(const Tensor& x);  // dropout(x, p, is_training(), generator())
  double p() const { return p_; }
  Generator& generator() { return gen_; }

 private:
  double p_;
  Generator gen_;
};

}  // namespace uwaga::nn
