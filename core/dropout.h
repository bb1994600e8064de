#pragma once
// Inverted dropout: in training each element is zeroed with probability p and the survivors are
// scaled by 1/(1 − p), so the expected value is unchanged and evaluation is the identity.
#include "core/random.h"
#include "core/tensor.h"

namespace uwaga {

Tensor dropout(const Tensor& x, double p, bool training, Generator& gen);

}  // namespace uwaga
