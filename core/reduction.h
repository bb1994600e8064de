#pragma once
// Reductions over any set of dims. With keepdim the reduced dims stay as size 1, so the result
// broadcasts against the input (as mean does in LayerNorm: x - mean(x, {-1}, true)).
// An empty dim list reduces every dim.
#include <vector>

#include "core/tensor.h"

namespace uwaga {

using Dims = std::vector<std::int64_t>;

Tensor sum(const Tensor& x);                                  // all elements -> shape ()
Tensor sum(const Tensor& x, const Dims& dims, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const Dims& dims, bool keepdim = false);
// max along dims. Along one dim the gradient goes to the first maximal element (PyTorch's
// max(x, dim)); over several dims or all of them (max(x), an empty list) the maximal elements of a
// slice share it equally (PyTorch's max() and amax()). NaN counts as the largest value.
Tensor max(const Tensor& x);
Tensor max(const Tensor& x, const Dims& dims, bool keepdim = false);
// Variance (1/(n - correction)) Σ (x - mean)²; correction 1 is the unbiased estimate (PyTorch's
// default), 0 the population variance LayerNorm uses.
Tensor var(const Tensor& x, const Dims& dims, bool keepdim = false, int correction = 1);
// Index of the maximum along dim, as int64; not differentiable.
Tensor argmax(const Tensor& x, std::int64_t dim, bool keepdim = false);
// The flat index of the first element of `x` that is NaN or ±inf; −1 when every element is finite
// (and for integer tensors). Checkpoints and GPT-2 imports run it over every value they hold.
std::int64_t first_non_finite(const Tensor& x);

}  // namespace uwaga
