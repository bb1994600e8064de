#include "core/shape_ops.h"

#include <algorithm>
#include <cstring>

#include "core/graph.h"
#include "core/threads.h"

namespace uwaga {
namespace {

// The one copy kernel behind permute, expand, slice and slice's backward. It walks a block of
// `shape` elements in row-major order and copies element i = (i_0, ..., i_{k-1}):
//   dst[Σ i_d · dst_strides[d]] = src[Σ i_d · src_strides[d]]
// Strides are in elements. A permutation permutes the source strides, a broadcast dim has source
// stride 0, a slice with step s multiplies a stride by s.
// The same block with fewer dims: dims of size 1 dropped (their index is always 0), and a dim merged
// into the next inner one where both walks continue across them without a jump (stride[d] =
// size[d+1]·stride[d+1] in source and destination alike). Patchifying one-channel images, for
// example, becomes runs of P contiguous pixels instead of runs of one.
void coalesce_dims(Shape& shape, Shape& dst_strides, Shape& src_strides) {
  Shape s, ds, ss;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!s.empty() && ds.back() == shape[d] * dst_strides[d] &&
        ss.back() == shape[d] * src_strides[d]) {
      s.back() *= shape[d];  // the outer dim folds into this one
      ds.back() = dst_strides[d];
      ss.back() = src_strides[d];
      continue;
    }
    s.push_back(shape[d]);
    ds.push_back(dst_strides[d]);
    ss.push_back(src_strides[d]);
  }
  shape = s, dst_strides = ds, src_strides = ss;
}

template <class T>
void copy_strided(T* dst, Shape dst_strides, const T* src, Shape src_strides, Shape shape) {
  if (numel(shape) == 0) return;
  coalesce_dims(shape, dst_strides, src_strides);
  const std::int64_t rank = static_cast<std::int64_t>(shape.size());
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  const std::int64_t n = shape[rank - 1];  // the innermost run
  if (n == 0) return;
  const std::int64_t rows = numel(shape) / n;
  const std::int64_t ds = dst_strides[rank - 1], ss = src_strides[rank - 1];
  parallel_for(rows, rows * n > kParallelThreshold, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      // Decode row r into the indices of the outer dims, from the last one up.
      std::int64_t rest = r, d_off = 0, s_off = 0;
      for (std::int64_t d = rank - 2; d >= 0; --d) {
        const std::int64_t i = rest % shape[d];
        rest /= shape[d];
        d_off += i * dst_strides[d];
        s_off += i * src_strides[d];
      }
      for (std::int64_t j = 0; j < n; ++j) dst[d_off + j * ds] = src[s_off + j * ss];
    }
  });
}

// A tensor with x's storage and a new shape: reshape, squeeze, unsqueeze and flatten all come
// down to this, since storage is always contiguous and row-major. The gradient only needs its
// shape changed back.
Tensor view_as_shape(const Tensor& x, const Shape& shape, const char* op) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = x.impl().storage;
  impl->shape = shape;
  impl->dtype = x.dtype();
  Shape in_shape = x.shape();
  return record(Tensor(impl), op, {x}, [in_shape](const Tensor& g) -> std::vector<Tensor> {
    return {reshape(g, in_shape)};
  });
}

// Resolves one -1 in a requested shape and checks that the sizes multiply to x's numel.
Shape infer_shape(const Shape& x_shape, const Shape& requested, const char* op) {
  Shape shape = requested;
  std::int64_t known = 1, infer_at = -1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1 && infer_at < 0) {
      infer_at = static_cast<std::int64_t>(d);
    } else if (shape[d] < 0) {
      fail(op, ": cannot reshape ", shape_str(x_shape), " into ", shape_str(requested),
           ": only one size may be -1 and none may be negative");
    } else {
      known *= shape[d];
    }
  }
  const std::int64_t n = numel(x_shape);
  if (infer_at >= 0 && known != 0 && n % known == 0) shape[infer_at] = n / known;
  if (numel(shape) != n || (infer_at >= 0 && known == 0))
    fail(op, ": cannot reshape ", shape_str(x_shape), " (", n, " elements) into ",
         shape_str(requested));
  return shape;
}

Tensor permute_impl(const Tensor& x, const std::vector<std::int64_t>& order, const char* op) {
  const Shape x_strides = contiguous_strides(x.shape());
  Shape out_shape(order.size()), src_strides(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    out_shape[i] = x.shape()[order[i]];
    src_strides[i] = x_strides[order[i]];
  }
  Tensor out = Tensor::empty(out_shape, x.dtype());
  dispatch_any(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    copy_strided(out.data<T>(), contiguous_strides(out_shape), x.data<T>(), src_strides,
                 out_shape);
  });
  // Output dim i came from input dim order[i], so the inverse sends gradient dim i back to
  // position order[i].
  std::vector<std::int64_t> inverse(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<std::int64_t>(i);
  return record(out, op, {x}, [inverse](const Tensor& g) -> std::vector<Tensor> {
    return {permute(g, inverse)};
  });
}

}  // namespace

// ---- views: share storage -----------------------------------------------------------------------

Tensor reshape(const Tensor& x, const Shape& shape) {
  check_defined(x, "reshape");
  return view_as_shape(x, infer_shape(x.shape(), shape, "reshape"), "reshape");
}

Tensor view(const Tensor& x, const Shape& shape) {
  check_defined(x, "view");
  return view_as_shape(x, infer_shape(x.shape(), shape, "view"), "view");
}

Tensor flatten(const Tensor& x, std::int64_t start_dim, std::int64_t end_dim) {
  check_defined(x, "flatten");
  if (x.dim() == 0) return view_as_shape(x, {1}, "flatten");  // as torch: a scalar becomes (1,)
  const std::int64_t s = normalize_dim(start_dim, x.dim(), "flatten");
  const std::int64_t e = normalize_dim(end_dim, x.dim(), "flatten");
  if (s > e)
    fail("flatten: start_dim ", start_dim, " comes after end_dim ", end_dim, " for ",
         shape_str(x.shape()));
  Shape shape(x.shape().begin(), x.shape().begin() + s);
  std::int64_t merged = 1;
  for (std::int64_t d = s; d <= e; ++d) merged *= x.shape()[d];
  shape.push_back(merged);
  shape.insert(shape.end(), x.shape().begin() + e + 1, x.shape().end());
  return view_as_shape(x, shape, "flatten");
}

Tensor squeeze(const Tensor& x, std::int64_t dim) {
  check_defined(x, "squeeze");
  const std::int64_t d = normalize_dim(dim, x.dim(), "squeeze");
  // torch silently returns x unchanged here; a size that is not 1 is almost always a shape bug.
  if (x.shape()[d] != 1)
    fail("squeeze: dim ", dim, " of ", shape_str(x.shape()), " has size ", x.shape()[d],
         ", not 1");
  Shape shape = x.shape();
  shape.erase(shape.begin() + d);
  return view_as_shape(x, shape, "squeeze");
}

Tensor unsqueeze(const Tensor& x, std::int64_t dim) {
  check_defined(x, "unsqueeze");
  const std::int64_t d = normalize_dim(dim, x.dim() + 1, "unsqueeze");  // may append a dim
  Shape shape = x.shape();
  shape.insert(shape.begin() + d, 1);
  return view_as_shape(x, shape, "unsqueeze");
}

// ---- copies -------------------------------------------------------------------------------------

Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1) {
  check_defined(x, "transpose");
  std::vector<std::int64_t> order(x.dim());
  for (std::int64_t d = 0; d < x.dim(); ++d) order[d] = d;
  std::swap(order[normalize_dim(dim0, x.dim(), "transpose")],
            order[normalize_dim(dim1, x.dim(), "transpose")]);
  return permute_impl(x, order, "transpose");
}

Tensor permute(const Tensor& x, const std::vector<std::int64_t>& order) {
  check_defined(x, "permute");
  const std::int64_t rank = x.dim();
  std::vector<std::int64_t> dims(order.size());
  std::vector<bool> seen(rank, false);
  bool ok = static_cast<std::int64_t>(order.size()) == rank;
  for (std::size_t i = 0; ok && i < order.size(); ++i) {
    dims[i] = order[i] < 0 ? order[i] + rank : order[i];
    ok = dims[i] >= 0 && dims[i] < rank && !seen[dims[i]];
    if (ok) seen[dims[i]] = true;
  }
  if (!ok)
    fail("permute: order ", shape_str(order), " is not a permutation of the ", rank,
         " dims of ", shape_str(x.shape()));
  return permute_impl(x, dims, "permute");
}

Tensor expand(const Tensor& x, const Shape& shape) {
  check_defined(x, "expand");
  const std::int64_t rank = static_cast<std::int64_t>(shape.size());
  const std::int64_t lead = rank - x.dim();  // new leading dims
  if (lead < 0)
    fail("expand: cannot expand ", shape_str(x.shape()), " to ", shape_str(shape),
         ", which has fewer dims");
  const Shape x_strides = contiguous_strides(x.shape());
  Shape out_shape(rank), src_strides(rank, 0);  // stride 0 repeats an element along a dim
  for (std::int64_t d = 0; d < rank; ++d) {
    const std::int64_t xs = d < lead ? 1 : x.shape()[d - lead];
    const std::int64_t want = (shape[d] == -1 && d >= lead) ? xs : shape[d];  // -1 keeps a size
    if (want < 0)
      fail("expand: cannot expand ", shape_str(x.shape()), " to ", shape_str(shape), ": size ",
           shape[d], " for dim ", d, " (only -1, keep the size, may be negative",
           d < lead ? ", and not for a new leading dim)" : ")");
    if (xs != want && xs != 1)
      fail("expand: cannot expand ", shape_str(x.shape()), " to ", shape_str(shape), ": dim ", d,
           " has size ", xs, ", not ", want, "; only a dim of size 1 can be expanded");
    out_shape[d] = want;
    if (d >= lead && xs == want) src_strides[d] = x_strides[d - lead];
  }
  Tensor out = Tensor::empty(out_shape, x.dtype());
  dispatch_any(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    copy_strided(out.data<T>(), contiguous_strides(out_shape), x.data<T>(), src_strides,
                 out_shape);
  });
  // Each input element was copied to many outputs, so its gradient is the sum of theirs: exactly
  // the broadcast reduction the engine applies to every gradient whose shape is not its input's
  // (reduce_to, core/autograd.h). So the rule hands g on, as add and mul do.
  return record(out, "expand", {x}, [](const Tensor& g) -> std::vector<Tensor> { return {g}; });
}

Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end,
             std::int64_t step) {
  check_defined(x, "slice");
  const std::int64_t d = normalize_dim(dim, x.dim(), "slice");
  if (step <= 0) fail("slice: step must be positive, got ", step, " (dim ", dim, " of ",
                      shape_str(x.shape()), ")");
  // Python's rules: negative bounds count from the end, then both are clamped to [0, n].
  const std::int64_t n = x.shape()[d];
  auto clamp = [n](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n); };
  const std::int64_t lo = clamp(start), hi = clamp(end);
  const std::int64_t len = hi > lo ? (hi - lo + step - 1) / step : 0;

  Shape out_shape = x.shape();
  out_shape[d] = len;
  // The slice seen inside x: starts at element lo·stride[d], steps step·stride[d] along d.
  Shape x_strides = contiguous_strides(x.shape());
  const std::int64_t offset = lo * x_strides[d];
  Shape strided = x_strides;
  strided[d] *= step;

  Tensor out = Tensor::empty(out_shape, x.dtype());
  dispatch_any(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    copy_strided(out.data<T>(), contiguous_strides(out_shape), x.data<T>() + offset, strided,
                 out_shape);
  });
  // Backward: each picked element gets its gradient back; the rest of x had no effect (zero).
  Shape in_shape = x.shape();
  return record(out, "slice", {x},
                [in_shape, out_shape, offset, strided](const Tensor& g) -> std::vector<Tensor> {
                  Tensor dx = Tensor::zeros(in_shape, g.dtype());  // (x.shape)
                  dispatch_float(g.dtype(), "slice backward", [&](auto tag) {
                    using T = decltype(tag);
                    copy_strided(dx.data<T>() + offset, strided, g.data<T>(),
                                 contiguous_strides(out_shape), out_shape);
                  });
                  return {dx};
                });
}

Tensor cat(const std::vector<Tensor>& xs, std::int64_t dim) {
  if (xs.empty()) fail("cat: needs at least one tensor");
  for (const Tensor& x : xs) check_defined(x, "cat");
  const Tensor& first = xs[0];
  if (first.dim() == 0) fail("cat: cannot concatenate 0-dim tensors; unsqueeze them first");
  const std::int64_t d = normalize_dim(dim, first.dim(), "cat");
  Shape out_shape = first.shape();
  out_shape[d] = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const Tensor& x = xs[k];
    check_same_dtype(first, x, "cat");
    bool ok = x.dim() == first.dim();
    for (std::int64_t e = 0; ok && e < x.dim(); ++e)
      ok = e == d || x.shape()[e] == first.shape()[e];
    if (!ok)
      fail("cat: tensor ", k, " has shape ", shape_str(x.shape()), " but tensor 0 has ",
           shape_str(first.shape()), "; all sizes must match except along dim ", dim);
    out_shape[d] += x.shape()[d];
  }

  // View every tensor as (outer, chunk) with chunk = size_d · inner; the output row of length
  // Σ chunk holds tensor 0's chunk, then tensor 1's, and so on.
  const std::int64_t outer = outer_size(out_shape, d), inner = inner_size(out_shape, d);
  const std::int64_t row = out_shape[d] * inner;
  Tensor out = Tensor::empty(out_shape, first.dtype());
  const std::size_t elem = dtype_size(first.dtype());
  std::vector<std::int64_t> starts, sizes;  // of each tensor along dim d, for backward
  std::int64_t pos = 0;
  for (const Tensor& x : xs) {
    const std::int64_t chunk = x.shape()[d] * inner, at = pos * inner;
    auto* dst = static_cast<char*>(out.raw_data());
    const auto* src = static_cast<const char*>(x.raw_data());
    parallel_for(outer, outer * chunk > kParallelThreshold, [&](std::int64_t o0, std::int64_t o1) {
      for (std::int64_t o = o0; o < o1; ++o)
        std::memcpy(dst + (o * row + at) * elem, src + o * chunk * elem, chunk * elem);
    });
    starts.push_back(pos);
    sizes.push_back(x.shape()[d]);
    pos += x.shape()[d];
  }
  // Backward: each input gets back its own slab of the gradient.
  return record(out, "cat", xs, [d, starts, sizes](const Tensor& g) -> std::vector<Tensor> {
    std::vector<Tensor> grads;
    for (std::size_t k = 0; k < sizes.size(); ++k)
      grads.push_back(slice(g, d, starts[k], starts[k] + sizes[k]));
    return grads;
  });
}

Tensor stack(const std::vector<Tensor>& xs, std::int64_t dim) {
  if (xs.empty()) fail("stack: needs at least one tensor");
  for (std::size_t k = 0; k < xs.size(); ++k) {
    check_defined(xs[k], "stack");
    if (xs[k].shape() != xs[0].shape())
      fail("stack: tensor ", k, " has shape ", shape_str(xs[k].shape()), " but tensor 0 has ",
           shape_str(xs[0].shape()), "; all shapes must be equal");
  }
  // stack = cat of the inputs each given a new size-1 dim; autograd composes the two backwards.
  const std::int64_t d = normalize_dim(dim, xs[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (const Tensor& x : xs) parts.push_back(unsqueeze(x, d));
  return cat(parts, d);
}

std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim) {
  check_defined(x, "split");
  const std::int64_t d = normalize_dim(dim, x.dim(), "split");
  if (split_size <= 0)
    fail("split: split_size must be positive, got ", split_size, " for ", shape_str(x.shape()));
  const std::int64_t n = x.shape()[d];
  std::vector<std::int64_t> sizes;
  for (std::int64_t at = 0; at < n; at += split_size) sizes.push_back(std::min(split_size, n - at));
  if (sizes.empty()) sizes.push_back(0);  // as torch: splitting an empty dim gives one empty piece
  return split(x, sizes, d);
}

std::vector<Tensor> split(const Tensor& x, const std::vector<std::int64_t>& sizes,
                          std::int64_t dim) {
  check_defined(x, "split");
  const std::int64_t d = normalize_dim(dim, x.dim(), "split");
  std::int64_t total = 0;
  for (auto s : sizes) {
    if (s < 0) fail("split: sizes ", shape_str(sizes), " include a negative size");
    total += s;
  }
  if (total != x.shape()[d])
    fail("split: sizes ", shape_str(sizes), " add up to ", total, ", but dim ", dim, " of ",
         shape_str(x.shape()), " has size ", x.shape()[d]);
  std::vector<Tensor> pieces;
  std::int64_t at = 0;
  for (auto s : sizes) {
    pieces.push_back(slice(x, d, at, at + s));
    at += s;
  }
  return pieces;
}

std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim) {
  check_defined(x, "chunk");
  if (chunks <= 0) fail("chunk: number of chunks must be positive, got ", chunks);
  const std::int64_t d = normalize_dim(dim, x.dim(), "chunk");
  // As torch: pieces of ceil(n / chunks), so there may be fewer than `chunks` of them.
  const std::int64_t n = x.shape()[d];
  return split(x, std::max<std::int64_t>((n + chunks - 1) / chunks, 1), d);
}

}  // namespace uwaga
