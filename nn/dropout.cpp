#include "nn/dropout.h"

#include "core/dropout.h"

namespace uwaga::nn {

Dropout::Dropout(double p, std::uint64_t seed) : p_(p), gen_(seed) {
  if (!(p >= 0 && p < 1)) fail("Dropout: p must be in [0, 1), got ", p);
}

Tensor Dropout::forward(const Tensor& x) { return dropout(x, p_, is_training(), gen_); }

}  // namespace uwaga::nn
