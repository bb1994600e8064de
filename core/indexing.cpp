#include "core/indexing.h"

#include <cstring>

#include "core/graph.h"
#include "core/threads.h"

namespace uwaga {
namespace {

void check_index_tensor(const Tensor& index, const char* op, const char* what) {
  check_defined(index, op);
  if (index.dtype() != DType::Int64)
    fail(op, ": ", what, " must be an int64 tensor, got ", dtype_name(index.dtype()), " of shape ",
         shape_str(index.shape()));
}

// Every index must lie in [0, size); the message names the op, the bad value and where it sits.
void check_in_range(const Tensor& index, std::int64_t size, const char* op, const char* what,
                    const std::string& range_of) {
  const std::int64_t* idx = index.data<std::int64_t>();
  for (std::int64_t i = 0; i < index.numel(); ++i)
    if (idx[i] < 0 || idx[i] >= size)
      fail(op, ": ", what, " ", idx[i], " at position ", i, " is out of range for ", range_of,
           " (valid range [0, ", size, "))");
}

// For gather: the flat offset into x of each element of index, i.e. of
//   x[i_0, ..., index[i_0, ..., i_k], ..., i_k]   (index replaces the coordinate along dim).
std::vector<std::int64_t> gather_offsets(const Shape& x_shape, const Tensor& index,
                                         std::int64_t dim) {
  const Shape x_strides = contiguous_strides(x_shape);
  const Shape& shape = index.shape();
  const std::int64_t* idx = index.data<std::int64_t>();
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(index.numel()));
  for (std::int64_t p = 0; p < index.numel(); ++p) {
    std::int64_t rest = p, off = 0;
    for (std::int64_t d = index.dim() - 1; d >= 0; --d) {
      const std::int64_t i = rest % shape[d];
      rest /= shape[d];
      off += (d == dim ? idx[p] : i) * x_strides[d];
    }
    offsets[p] = off;
  }
  return offsets;
}

}  // namespace

Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index) {
  check_defined(x, "index_select");
  check_index_tensor(index, "index_select", "index");
  if (index.dim() != 1)
    fail("index_select: index must be 1-D, got shape ", shape_str(index.shape()));
  const std::int64_t d = normalize_dim(dim, x.dim(), "index_select");
  const std::int64_t outer = outer_size(x.shape(), d), n = x.shape()[d];
  const std::int64_t inner = inner_size(x.shape(), d), m = index.numel();
  check_in_range(index, n, "index_select", "index",
                 "dim " + std::to_string(dim) + " of " + shape_str(x.shape()));

  Shape out_shape = x.shape();
  out_shape[d] = m;
  Tensor out = Tensor::empty(out_shape, x.dtype());  // (outer, m, inner)
  const std::int64_t* idx = index.data<std::int64_t>();
  dispatch_any(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();  // (outer, n, inner)
    T* dst = out.data<T>();      // (outer, m, inner)
    parallel_for(outer, outer * m * inner > kParallelThreshold,
                 [&](std::int64_t o0, std::int64_t o1) {
      for (std::int64_t o = o0; o < o1; ++o)
        for (std::int64_t i = 0; i < m; ++i)
          std::memcpy(dst + (o * m + i) * inner, src + (o * n + idx[i]) * inner,
                      sizeof(T) * inner);
    });
  });

  // Backward: slab i of the output came from slab index[i] of x, so its gradient is added there.
  // An index that appears twice collects both gradients. Different o never collide, so the outer
  // loop can run in parallel.
  Shape x_shape = x.shape();
  return record(out, "index_select", {x, index},
                [x_shape, index, outer, n, inner, m](const Tensor& g) -> std::vector<Tensor> {
                  Tensor dx = Tensor::zeros(x_shape, g.dtype());  // (outer, n, inner)
                  const std::int64_t* idx = index.data<std::int64_t>();
                  dispatch_float(g.dtype(), "index_select backward", [&](auto tag) {
                    using T = decltype(tag);
                    const T* dy = g.data<T>();  // (outer, m, inner)
                    T* dsrc = dx.data<T>();
                    parallel_for(outer, outer * m * inner > kParallelThreshold,
                                 [&](std::int64_t o0, std::int64_t o1) {
                      for (std::int64_t o = o0; o < o1; ++o)
                        for (std::int64_t i = 0; i < m; ++i)
                          for (std::int64_t k = 0; k < inner; ++k)
                            dsrc[(o * n + idx[i]) * inner + k] += dy[(o * m + i) * inner + k];
                    });
                  });
                  return {dx, Tensor()};
                });
}

Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index) {
  check_defined(x, "gather");
  check_index_tensor(index, "gather", "index");
  const std::int64_t d = normalize_dim(dim, x.dim(), "gather");
  bool ok = index.dim() == x.dim();
  for (std::int64_t e = 0; ok && e < x.dim(); ++e)
    ok = e == d || index.shape()[e] <= x.shape()[e];
  if (!ok)
    fail("gather: index of shape ", shape_str(index.shape()), " does not fit x of shape ",
         shape_str(x.shape()), ": it needs x's rank and no larger size except along dim ", dim);
  check_in_range(index, x.shape()[d], "gather", "index",
                 "dim " + std::to_string(dim) + " of " + shape_str(x.shape()));

  const std::vector<std::int64_t> offsets = gather_offsets(x.shape(), index, d);
  Tensor out = Tensor::empty(index.shape(), x.dtype());  // (index.shape)
  dispatch_any(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    for (std::size_t p = 0; p < offsets.size(); ++p) dst[p] = src[offsets[p]];
  });

  // Backward: out[p] was x[offsets[p]], so dx[offsets[p]] += dout[p] (repeats add up).
  Shape x_shape = x.shape();
  return record(out, "gather", {x, index},
                [x_shape, index, d](const Tensor& g) -> std::vector<Tensor> {
                  const std::vector<std::int64_t> offsets = gather_offsets(x_shape, index, d);
                  Tensor dx = Tensor::zeros(x_shape, g.dtype());
                  dispatch_float(g.dtype(), "gather backward", [&](auto tag) {
                    using T = decltype(tag);
                    const T* dy = g.data<T>();
                    T* dsrc = dx.data<T>();
                    for (std::size_t p = 0; p < offsets.size(); ++p) dsrc[offsets[p]] += dy[p];
                  });
                  return {dx, Tensor()};
                });
}

Tensor embedding(const Tensor& weight, const Tensor& ids) {
  check_float(weight, "embedding");
  check_index_tensor(ids, "embedding", "ids");
  if (weight.dim() != 2)
    fail("embedding: weight must be 2-D (vocab, dim), got shape ", shape_str(weight.shape()));
  const std::int64_t V = weight.shape()[0], D = weight.shape()[1], n = ids.numel();
  check_in_range(ids, V, "embedding", "id",
                 "a vocabulary of " + std::to_string(V) + " rows (weight " +
                     shape_str(weight.shape()) + ")");

  Shape out_shape = ids.shape();
  out_shape.push_back(D);
  Tensor out = Tensor::empty(out_shape, weight.dtype());  // (*ids.shape, D)
  const std::int64_t* id = ids.data<std::int64_t>();
  dispatch_float(weight.dtype(), "embedding", [&](auto tag) {
    using T = decltype(tag);
    const T* W = weight.data<T>();  // (V, D)
    T* y = out.data<T>();            // (n, D)
    parallel_for(n, n * D > kParallelThreshold, [&](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) std::memcpy(y + i * D, W + id[i] * D, sizeof(T) * D);
    });
  });

  // Backward: row i of the output is row id[i] of W, so dW[id[i]] += dy[i]. One loop, in order:
  // a token that occurs many times would race with itself in a parallel loop. The rule adds into
  // a (V, D) of zeros; where W already holds a gradient (GPT-2's table, tied to its output layer)
  // the engine has the same loop add into that one instead (Node::accumulate_into_input0).
  auto add_rows = [ids, D](const Tensor& g, Tensor& dW) {
    const std::int64_t* id = ids.data<std::int64_t>();
    dispatch_float(g.dtype(), "embedding backward", [&](auto tag) {
      using T = decltype(tag);
      const T* dy = g.data<T>();  // (n, D)
      T* dw = dW.data<T>();       // (V, D)
      for (std::int64_t i = 0; i < ids.numel(); ++i)
        for (std::int64_t k = 0; k < D; ++k) dw[id[i] * D + k] += dy[i * D + k];
    });
  };
  return record_accumulating(
      out, "embedding", {weight, ids},
      [add_rows, V, D](const Tensor& g) -> std::vector<Tensor> {
        Tensor dW = Tensor::zeros({V, D}, g.dtype());
        add_rows(g, dW);
        return {dW, Tensor()};
      },
      add_rows);
}

}  // namespace uwaga
