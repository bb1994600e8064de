#pragma once
// Gathering rows and elements by integer index. Backward scatters: the gradient of a row picked
// k times is the sum of its k incoming gradients (scatter-add).
#include "core/tensor.h"

namespace uwaga {

// index_select(x, dim, index): the slices x[..., index[i], ...] along dim; index is 1-D int64.
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index);
// gather(x, dim, index): out[i][j][k] = x[i][index[i][j][k]][k] for dim 1 (as torch.gather);
// index is int64 with x's rank.
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index);
// embedding(weight, ids): weight (V, D), ids int64 of any shape -> (*ids.shape, D).
Tensor embedding(const Tensor& weight, const Tensor& ids);

}  // namespace uwaga
