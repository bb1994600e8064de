#pragma once
// Dropout as a module: zeroes elements with probability p in training, identity in eval().
// It owns its generator, seeded at construction, so runs are reproducible.
#include "core/random.h"
#include "nn/module.h"

namespace uwaga::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p, std::uint64_t seed = 0);
  Tensor forward(const Tensor& x);
  double p() const { return p_; }
  Generator& generator() { return gen_; }

 private:
  double p_;
  Generator gen_;
};

}  // namespace uwaga::nn
