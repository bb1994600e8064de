#include "core/reduction.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/bfloat16.h"
#include "core/elementwise.h"
#include "core/graph.h"
#include "core/shape_ops.h"
#include "core/threads.h"

namespace uwaga {
namespace {

// Sorted, unique, non-negative dims; an empty list means every dim.
Dims normalize_dims(const Dims& dims, std::int64_t rank, const char* op) {
  Dims out;
  if (dims.empty()) {
    for (std::int64_t d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  for (auto d : dims) out.push_back(normalize_dim(d, rank, op));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    fail(op, ": dim list repeats a dim");
  return out;
}

Shape kept_shape(const Shape& shape, const Dims& dims) {
  Shape out = shape;
  for (auto d : dims) out[d] = 1;
  return out;
}

Shape dropped_shape(const Shape& shape, const Dims& dims) {
  Shape out;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), static_cast<std::int64_t>(d)))
      out.push_back(shape[d]);
  return out;
}

// A reduced block of dims viewed as (outer, n, inner): outer = dims before it, n = the block,
// inner = dims after it.
struct Block {
  std::int64_t outer = 1, n = 1, inner = 1;
};

Block block_of(const Shape& shape, std::int64_t first, std::int64_t last) {
  Block b;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    if (d < first) b.outer *= shape[d];
    else if (d <= last) b.n *= shape[d];
    else b.inner *= shape[d];
  }
  return b;
}

// out(outer, inner) = Σ_r x(outer, r, inner)
template <class T>
void sum_block(const T* x, T* out, const Block& b) {
  if (b.inner == 1) {
    parallel_for(b.outer, b.outer * b.n > kParallelThreshold,
                 [&](std::int64_t o0, std::int64_t o1) {
      for (std::int64_t o = o0; o < o1; ++o) {
        double acc = 0;  // a double accumulator keeps long float32 sums accurate
        const T* row = x + o * b.n;
        for (std::int64_t r = 0; r < b.n; ++r) acc += row[r];
        out[o] = static_cast<T>(acc);
      }
    });
    return;
  }
  parallel_for(b.outer, b.outer * b.n * b.inner > kParallelThreshold,
               [&](std::int64_t o0, std::int64_t o1) {
    // Summed row by row (reading x in order) into double accumulators, as above: a float32
    // running sum of 10⁶ values of 0.1 would be 1 % off.
    std::vector<double> acc(static_cast<std::size_t>(b.inner));
    for (std::int64_t o = o0; o < o1; ++o) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::int64_t r = 0; r < b.n; ++r) {
        const T* src = x + (o * b.n + r) * b.inner;
        for (std::int64_t i = 0; i < b.inner; ++i) acc[i] += src[i];
      }
      T* dst = out + o * b.inner;
      for (std::int64_t i = 0; i < b.inner; ++i) dst[i] = static_cast<T>(acc[i]);
    }
  });
}

// Sums a contiguous run of dims [first, last] (kept as size 1). No autograd.
Tensor sum_run(const Tensor& x, std::int64_t first, std::int64_t last) {
  Shape shape = x.shape();
  Block b = block_of(shape, first, last);
  for (std::int64_t d = first; d <= last; ++d) shape[d] = 1;
  Tensor out = Tensor::empty(shape, x.dtype());
  dispatch_float(x.dtype(), "sum", [&](auto tag) {
    using T = decltype(tag);
    sum_block<T>(x.data<T>(), out.data<T>(), b);
  });
  return out;
}

// Σ over `dims` with keepdim; consecutive dims are reduced in one pass.
Tensor sum_kernel(const Tensor& x, const Dims& dims) {
  if (dims.empty()) {  // a 0-d tensor: its sum is a copy of itself
    Tensor copy = Tensor::empty(x.shape(), x.dtype());
    copy.copy_from(x);
    return copy;
  }
  Tensor cur = x;
  std::size_t i = dims.size();
  while (i > 0) {  // from the last run backwards, so earlier dim indices stay valid
    std::size_t j = i - 1;
    while (j > 0 && dims[j - 1] + 1 == dims[j]) --j;
    cur = sum_run(cur, dims[j], dims[i - 1]);
    i = j;
  }
  return cur;
}

}  // namespace

Tensor sum(const Tensor& x) { return sum(x, {}, false); }

Tensor sum(const Tensor& x, const Dims& dims_in, bool keepdim) {
  check_float(x, "sum");
  Dims dims = normalize_dims(dims_in, x.dim(), "sum");
  Tensor out = sum_kernel(x, dims);
  if (!keepdim) out.impl().shape = dropped_shape(x.shape(), dims);
  Shape in_shape = x.shape();
  Shape keep = kept_shape(in_shape, dims);
  // Each input element contributes once: dx = dy broadcast back over the reduced dims.
  return record(out, "sum", {x}, [in_shape, keep](const Tensor& g) -> std::vector<Tensor> {
    return {broadcast_copy(reshape(g, keep), in_shape)};
  });
}

Tensor mean(const Tensor& x) { return mean(x, {}, false); }

Tensor mean(const Tensor& x, const Dims& dims_in, bool keepdim) {
  check_float(x, "mean");
  Dims dims = normalize_dims(dims_in, x.dim(), "mean");
  std::int64_t count = 1;
  for (auto d : dims) count *= x.shape()[d];
  if (count == 0) fail("mean: reducing ", shape_str(x.shape()), " over an empty dim");
  return div(sum(x, dims, keepdim), static_cast<double>(count));
}

namespace {

// max over several dims (sorted, at least two, or the one dim of a 1-D max(x)). Its gradient is
// shared equally by the maximal elements of each reduced slice, as PyTorch's max() and amax()
// share it: dx = g · [x = m] / #{x = m}, where a NaN counts as equal to a NaN maximum.
Tensor max_shared(const Tensor& x, const Dims& dims, bool keepdim) {
  Tensor m;  // the maxima, x's shape with the reduced dims of size 1
  {
    NoGradGuard no_grad;
    m = x.detach();
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) m = max(m, {*it}, true);
  }
  Tensor out = (keepdim ? m : reshape(m, dropped_shape(x.shape(), dims))).clone();
  return record(out, "max", {x}, [x, m, dims](const Tensor& g) -> std::vector<Tensor> {
    // both NaN: (1 − [x = x]) (1 − [m = m]); disjoint from [x = m], which is 0 for NaNs
    Tensor is_max = add(eq(x, m), mul(sub(1.0, eq(x, x)), sub(1.0, eq(m, m))));
    Tensor share = div(is_max, sum(is_max, dims, true));  // (x's shape)
    return {mul(share, reshape(g, m.shape()))};
  });
}

}  // namespace

Tensor max(const Tensor& x) { return max(x, {}, false); }

Tensor max(const Tensor& x, const Dims& dims_in, bool keepdim) {
  check_float(x, "max");
  Dims dims = normalize_dims(dims_in, x.dim(), "max");
  // A 0-d tensor reduced over every dim (there are none): its max is its one value, as its sum is.
  if (dims.empty()) return max(reshape(x, {1}), {0}, false);
  // Several dims, or all of them (an empty list): ties share the gradient. One dim of several:
  // the gradient goes to the first maximal element, as PyTorch's max(x, dim) (with its indices).
  if (dims.size() > 1 || (dims_in.empty() && x.numel() > 0))
    return max_shared(x, dims, keepdim);
  const std::int64_t dim = dims[0];
  Block b = block_of(x.shape(), dim, dim);
  if (b.n == 0) fail("max: dim ", dim, " of shape ", shape_str(x.shape()), " is empty");
  Shape keep = kept_shape(x.shape(), dims);
  Tensor out = Tensor::empty(keep, x.dtype());
  Tensor where_max = Tensor::empty(keep, DType::Int64);  // saved for backward
  dispatch_float(x.dtype(), "max", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* po = out.data<T>();
    std::int64_t* pi = where_max.data<std::int64_t>();
    parallel_for(b.outer, x.numel() > kParallelThreshold, [&](std::int64_t o0, std::int64_t o1) {
      for (std::int64_t o = o0; o < o1; ++o)
        for (std::int64_t i = 0; i < b.inner; ++i) {
          std::int64_t best = 0;
          T v = px[o * b.n * b.inner + i];
          for (std::int64_t r = 1; r < b.n; ++r) {
            T c = px[(o * b.n + r) * b.inner + i];
            if (c > v || (std::isnan(c) && !std::isnan(v))) v = c, best = r;
          }
          po[o * b.inner + i] = v;
          pi[o * b.inner + i] = best;
        }
    });
  });
  if (!keepdim) out.impl().shape = dropped_shape(x.shape(), dims);
  Shape in_shape = x.shape();
  // The gradient flows only to the first maximal element of each reduced slice.
  return record(out, "max", {x}, [in_shape, where_max, b](const Tensor& g) -> std::vector<Tensor> {
    Tensor dx = Tensor::zeros(in_shape, g.dtype());
    dispatch_float(g.dtype(), "max", [&](auto tag) {
      using T = decltype(tag);
      const T* pg = g.data<T>();
      const std::int64_t* pi = where_max.data<std::int64_t>();
      T* pd = dx.data<T>();
      for (std::int64_t o = 0; o < b.outer; ++o)
        for (std::int64_t i = 0; i < b.inner; ++i)
          pd[(o * b.n + pi[o * b.inner + i]) * b.inner + i] = pg[o * b.inner + i];
    });
    return {dx};
  });
}

Tensor var(const Tensor& x, const Dims& dims_in, bool keepdim, int correction) {
  check_float(x, "var");
  Dims dims = normalize_dims(dims_in, x.dim(), "var");
  std::int64_t count = 1;
  for (auto d : dims) count *= x.shape()[d];
  if (count - correction <= 0)
    fail("var: ", count, " elements with correction ", correction, " leave no degrees of freedom");
  // Composed from primitives, so autograd derives its gradient.
  Tensor centered = sub(x, mean(x, dims, true));
  return div(sum(mul(centered, centered), dims, keepdim), static_cast<double>(count - correction));
}

Tensor argmax(const Tensor& x, std::int64_t dim_in, bool keepdim) {
  check_float(x, "argmax");
  std::int64_t dim = normalize_dim(dim_in, x.dim(), "argmax");
  Block b = block_of(x.shape(), dim, dim);
  if (b.n == 0) fail("argmax: dim ", dim, " of shape ", shape_str(x.shape()), " is empty");
  Shape keep = x.shape();
  keep[dim] = 1;
  Tensor out = Tensor::empty(keep, DType::Int64);
  dispatch_float(x.dtype(), "argmax", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    std::int64_t* po = out.data<std::int64_t>();
    // Each of the outer × inner lines on its own, the lines shared among the threads (a language
    // model's accuracy takes the argmax of every token's 50,257 logits).
    const std::int64_t lines = b.outer * b.inner;
    parallel_for(lines, lines > 1 && x.numel() > kParallelThreshold,
                 [&](std::int64_t l0, std::int64_t l1) {
      for (std::int64_t l = l0; l < l1; ++l) {
        const std::int64_t o = l / b.inner, i = l % b.inner;
        // NaN counts as the largest value, as in max (and PyTorch): the first NaN wins.
        std::int64_t best = 0;
        T v = px[o * b.n * b.inner + i];
        for (std::int64_t r = 1; r < b.n; ++r) {
          const T c = px[(o * b.n + r) * b.inner + i];
          if (c > v || (std::isnan(c) && !std::isnan(v))) v = c, best = r;
        }
        po[l] = best;
      }
    });
  });
  if (!keepdim) out.impl().shape = dropped_shape(x.shape(), {dim});
  return out;
}

namespace {

// A float is NaN or ±inf exactly when its exponent bits are all ones. Tested on the bits with an
// OR over a block and no early exit, the loop vectorises: three times std::isfinite's speed, the
// memory's own (a GPT-2 checkpoint holds 373 M values). Then only a block that holds one is
// searched for the first.
template <class T, class Bits>
std::int64_t first_non_finite_bits(const T* p, std::int64_t n, Bits exponent) {
  static_assert(sizeof(T) == sizeof(Bits));
  auto bad = [&](std::int64_t i) {
    Bits u;
    std::memcpy(&u, p + i, sizeof u);
    return (u & exponent) == exponent;
  };
  constexpr std::int64_t kBlock = 4096;
  std::atomic<std::int64_t> first{n};  // the smallest index any piece found
  parallel_for((n + kBlock - 1) / kBlock, n >= (std::int64_t{1} << 20),
               [&](std::int64_t block_begin, std::int64_t block_end) {
    for (std::int64_t b = block_begin * kBlock; b < std::min(n, block_end * kBlock); b += kBlock) {
      const std::int64_t end = std::min(n, b + kBlock);
      bool any = false;
      for (std::int64_t i = b; i < end; ++i) any |= bad(i);
      if (!any) continue;
      std::int64_t at = b;
      while (!bad(at)) ++at;
      std::int64_t seen = first.load();
      while (at < seen && !first.compare_exchange_weak(seen, at)) {}
      return;  // pieces are contiguous and in order: this piece's first is found
    }
  });
  const std::int64_t found = first.load();
  return found == n ? -1 : found;
}

}  // namespace

std::int64_t first_non_finite(const Tensor& x) {
  const std::int64_t n = x.numel();
  switch (x.dtype()) {
    case DType::Float32:
      return first_non_finite_bits(x.data<float>(), n, std::uint32_t{0x7f800000u});
    case DType::Float64:
      return first_non_finite_bits(x.data<double>(), n, std::uint64_t{0x7ff0000000000000u});
    case DType::BFloat16:
      return first_non_finite_bits(x.data<bfloat16_bits>(), n, std::uint16_t{0x7f80u});
    default:
      return -1;
  }
}

}  // namespace uwaga
