#include "core/shape.h"

#include <algorithm>

#include "core/error.h"

namespace uwaga {

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  bool overflow = false;
  for (auto s : shape) overflow |= __builtin_mul_overflow(n, s, &n);
  // A size 0 anywhere makes the product 0 however large the others are (and n is then 0: a 0
  // after the overflow multiplies the wrapped product by 0, one before it keeps n at 0).
  if (overflow && std::find(shape.begin(), shape.end(), 0) == shape.end())
    fail("tensor: shape ", shape_str(shape), " has more elements than an int64 can count");
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (std::int64_t i = static_cast<std::int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::int64_t normalize_dim(std::int64_t dim, std::int64_t rank, const char* op) {
  std::int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank)
    fail(op, ": dim ", dim, " is out of range for a tensor with ", rank, " dims");
  return d;
}

std::int64_t outer_size(const Shape& shape, std::int64_t dim) {
  std::int64_t n = 1;
  for (std::int64_t d = 0; d < dim; ++d) n *= shape[d];
  return n;
}

std::int64_t inner_size(const Shape& shape, std::int64_t dim) {
  std::int64_t n = 1;
  for (std::size_t d = dim + 1; d < shape.size(); ++d) n *= shape[d];
  return n;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    std::int64_t sa = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    std::int64_t sb = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (sa != sb && sa != 1 && sb != 1)
      fail(op, ": shapes ", shape_str(a), " and ", shape_str(b), " cannot be broadcast: dim ", i,
           " has sizes ", sa, " and ", sb);
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

}  // namespace uwaga
