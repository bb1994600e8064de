#pragma once
// Shapes are plain vectors of sizes, row-major: the last dimension is contiguous.
#include <cstdint>
#include <string>
#include <vector>

namespace uwaga {

using Shape = std::vector<std::int64_t>;

std::int64_t numel(const Shape& shape);
std::string shape_str(const Shape& shape);             // "(2, 3, 4)"
Shape contiguous_strides(const Shape& shape);          // in elements
// Normalises a possibly negative dim for a tensor of `rank` dims; `op` names the caller in errors.
std::int64_t normalize_dim(std::int64_t dim, std::int64_t rank, const char* op);
// A row-major shape seen as (outer, shape[dim], inner) around `dim`: the product of the sizes
// before it and of those after it. Ops along one dim (cat, gather, …) walk it as that 3-D block.
std::int64_t outer_size(const Shape& shape, std::int64_t dim);
std::int64_t inner_size(const Shape& shape, std::int64_t dim);
// NumPy broadcasting: align trailing dims; sizes must match or one of them be 1.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace uwaga
