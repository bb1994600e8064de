#pragma once
// Global gradient-norm clipping: when ‖g‖ = √(Σ over all parameters of Σ g²) exceeds max_norm,
// every gradient is scaled by max_norm / ‖g‖, so the update keeps its direction.
#include <vector>

#include "core/tensor.h"

namespace uwaga::optim {

// Returns the norm before clipping (non-finite when some gradient is). max_norm = 0: only
// measures; a negative or NaN max_norm is refused.
double clip_grad_norm(const std::vector<Tensor>& params, double max_norm);

}  // namespace uwaga::optim
