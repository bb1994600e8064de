#pragma once
// Ops that rearrange elements without arithmetic. reshape, flatten, squeeze and unsqueeze return
// views that share storage; transpose, permute, expand, slice, cat and stack copy.
#include <vector>

#include "core/tensor.h"

namespace uwaga {

Tensor reshape(const Tensor& x, const Shape& shape);  // one size may be -1 (inferred)
Tensor view(const Tensor& x, const Shape& shape);     // same as reshape (storage is contiguous)
Tensor flatten(const Tensor& x, std::int64_t start_dim = 0, std::int64_t end_dim = -1);
Tensor squeeze(const Tensor& x, std::int64_t dim);
Tensor unsqueeze(const Tensor& x, std::int64_t dim);
Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1);
Tensor permute(const Tensor& x, const std::vector<std::int64_t>& order);
Tensor expand(const Tensor& x, const Shape& shape);   // broadcast to `shape` (a copy)
// Elements start, start+step, ... < end along dim (negative start/end count from the end).
Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end,
             std::int64_t step = 1);
Tensor cat(const std::vector<Tensor>& xs, std::int64_t dim);
Tensor stack(const std::vector<Tensor>& xs, std::int64_t dim);
std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim);
std::vector<Tensor> split(const Tensor& x, const std::vector<std::int64_t>& sizes,
                          std::int64_t dim);
std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim);

}  // namespace uwaga
