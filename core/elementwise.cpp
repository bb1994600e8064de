#include "core/elementwise.h"

#include <cmath>

#include "core/graph.h"
#include "core/threads.h"

namespace uwaga {
namespace {

// Strides (in elements) that read a tensor of shape `in` as if it had the broadcast shape
// `out`: 0 along stretched dims.
Shape broadcast_strides(const Shape& in, const Shape& out) {
  Shape strides(out.size(), 0);
  Shape own = contiguous_strides(in);
  std::size_t shift = out.size() - in.size();
  for (std::size_t d = 0; d < in.size(); ++d)
    strides[d + shift] = in[d] == 1 ? 0 : own[d];
  return strides;
}

// out[idx] = f(a[idx], b[idx]) over the broadcast shape of a and b. The last dim runs as a
// contiguous inner loop; rows are shared among threads when large.
template <class T, class F>
Tensor binary_kernel(const Tensor& a, const Tensor& b, const char* op, F f) {
  Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  Tensor out = Tensor::empty(shape, a.dtype());
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  const std::int64_t n = out.numel();
  if (n == 0) return out;
  if (a.shape() == b.shape()) {
    parallel_for(n, n > kParallelThreshold, [&](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) po[i] = f(pa[i], pb[i]);
    });
    return out;
  }
  if (b.numel() == 1 && a.shape() == shape) {
    parallel_for(n, n > kParallelThreshold, [&](std::int64_t i0, std::int64_t i1) {
      // The scalar as a local of this piece: read through the lambda's reference, a store to
      // po[i] might change it, and GCC would neither keep it in a register nor vectorise.
      const T s = pb[0];
      for (std::int64_t i = i0; i < i1; ++i) po[i] = f(pa[i], s);
    });
    return out;
  }
  const std::size_t rank = shape.size();
  const Shape sa = broadcast_strides(a.shape(), shape);
  const Shape sb = broadcast_strides(b.shape(), shape);
  const std::int64_t inner = shape[rank - 1];
  const std::int64_t rows = n / inner;
  const std::int64_t ia = sa[rank - 1], ib = sb[rank - 1];
  parallel_for(rows, n > kParallelThreshold, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t row = r0; row < r1; ++row) {
      std::int64_t oa = 0, ob = 0, rest = row;
      for (std::int64_t d = static_cast<std::int64_t>(rank) - 2; d >= 0; --d) {
        std::int64_t i = rest % shape[d];
        rest /= shape[d];
        oa += i * sa[d];
        ob += i * sb[d];
      }
      T* o = po + row * inner;
      for (std::int64_t j = 0; j < inner; ++j) o[j] = f(pa[oa + j * ia], pb[ob + j * ib]);
    }
  });
  return out;
}

template <class F>
Tensor binary(const Tensor& a, const Tensor& b, const char* op, F f) {
  check_float(a, op);
  check_float(b, op);
  check_same_dtype(a, b, op);
  return dispatch_float(a.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    return binary_kernel<T>(a, b, op, f);
  });
}

// out[i] = f(x[i])
template <class F>
Tensor unary(const Tensor& x, const char* op, F f) {
  check_float(x, op);
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  dispatch_float(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* po = out.data<T>();
    const std::int64_t n = x.numel();
    parallel_for(n, n > kParallelThreshold, [&](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) po[i] = f(px[i]);
    });
  });
  return out;
}

}  // namespace

Tensor broadcast_copy(const Tensor& x, const Shape& shape) {
  check_defined(x, "expand");
  Shape target = broadcast_shapes(x.shape(), shape, "expand");
  if (target != shape)
    fail("expand: shape ", shape_str(x.shape()), " cannot be expanded to ", shape_str(shape));
  Tensor zero = Tensor::zeros(shape, x.dtype());
  if (!x.is_floating()) fail_not_float("expand", x.dtype(), &x.shape());
  return binary(zero, x, "expand", [](auto, auto v) { return v; });
}

// ---- binary ops -------------------------------------------------------------------------------

Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = binary(a, b, "add", [](auto x, auto y) { return x + y; });
  return record(out, "add", {a, b}, [](const Tensor& g) -> std::vector<Tensor> { return {g, g}; });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor out = binary(a, b, "sub", [](auto x, auto y) { return x - y; });
  return record(out, "sub", {a, b},
                [](const Tensor& g) -> std::vector<Tensor> { return {g, neg(g)}; });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = binary(a, b, "mul", [](auto x, auto y) { return x * y; });
  return record(out, "mul", {a, b}, [a, b](const Tensor& g) -> std::vector<Tensor> {
    return {a.requires_grad() ? mul(g, b) : Tensor(), b.requires_grad() ? mul(g, a) : Tensor()};
  });
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = binary(a, b, "div", [](auto x, auto y) { return x / y; });
  // d(a/b)/da = 1/b;  d(a/b)/db = −a/b² = −(a/b)/b
  Tensor y = out.detach();
  return record(out, "div", {a, b}, [b, y](const Tensor& g) -> std::vector<Tensor> {
    Tensor ga = div(g, b);
    return {ga, neg(mul(ga, y))};
  }, {y});
}

Tensor maximum(const Tensor& a, const Tensor& b) {
  // A NaN on either side gives NaN (as PyTorch), whatever the argument order.
  Tensor out = binary(a, b, "maximum", [](auto x, auto y) { return (x >= y || x != x) ? x : y; });
  // As PyTorch: the gradient goes to the larger, half to each on a tie, and all of it to both
  // when one is NaN (neither x < y nor x > y holds).
  return record(out, "maximum", {a, b}, [a, b](const Tensor& g) -> std::vector<Tensor> {
    auto share = [](auto x, auto y) { return decltype(x)(x > y ? 1 : x < y ? 0 : x == y ? 0.5 : 1); };
    Tensor to_a = binary(a, b, "maximum", share);
    Tensor to_b = binary(b, a, "maximum", share);
    return {mul(g, to_a), mul(g, to_b)};
  });
}

// ---- scalar variants ----------------------------------------------------------------------------

Tensor add(const Tensor& a, double s) {
  Tensor out = unary(a, "add", [s](auto x) { return x + static_cast<decltype(x)>(s); });
  return record(out, "add_scalar", {a}, [](const Tensor& g) -> std::vector<Tensor> { return {g}; });
}

Tensor sub(const Tensor& a, double s) { return add(a, -s); }

Tensor sub(double s, const Tensor& a) {
  Tensor out = unary(a, "sub", [s](auto x) { return static_cast<decltype(x)>(s) - x; });
  return record(out, "rsub_scalar", {a},
                [](const Tensor& g) -> std::vector<Tensor> { return {neg(g)}; });
}

Tensor mul(const Tensor& a, double s) {
  Tensor out = unary(a, "mul", [s](auto x) { return x * static_cast<decltype(x)>(s); });
  return record(out, "mul_scalar", {a},
                [s](const Tensor& g) -> std::vector<Tensor> { return {mul(g, s)}; });
}

Tensor div(const Tensor& a, double s) {
  Tensor out = unary(a, "div", [s](auto x) { return x / static_cast<decltype(x)>(s); });
  return record(out, "div_scalar", {a},
                [s](const Tensor& g) -> std::vector<Tensor> { return {div(g, s)}; });
}

Tensor div(double s, const Tensor& a) {
  Tensor out = unary(a, "div", [s](auto x) { return static_cast<decltype(x)>(s) / x; });
  // d(s/a)/da = −s/a² = −y/a
  Tensor y = out.detach();
  return record(out, "rdiv_scalar", {a}, [a, y](const Tensor& g) -> std::vector<Tensor> {
    return {neg(div(mul(g, y), a))};
  }, {y});
}

// ---- unary ops ------------------------------------------------------------------------------

Tensor neg(const Tensor& x) {
  Tensor out = unary(x, "neg", [](auto v) { return -v; });
  return record(out, "neg", {x}, [](const Tensor& g) -> std::vector<Tensor> { return {neg(g)}; });
}

Tensor exp(const Tensor& x) {
  Tensor out = unary(x, "exp", [](auto v) { return std::exp(v); });
  Tensor y = out.detach();
  return record(out, "exp", {x}, [y](const Tensor& g) -> std::vector<Tensor> {
    return {mul(g, y)};  // d exp(x) = exp(x)
  }, {y});
}

Tensor log(const Tensor& x) {
  Tensor out = unary(x, "log", [](auto v) { return std::log(v); });
  return record(out, "log", {x},
                [x](const Tensor& g) -> std::vector<Tensor> { return {div(g, x)}; });
}

Tensor sqrt(const Tensor& x) {
  Tensor out = unary(x, "sqrt", [](auto v) { return std::sqrt(v); });
  Tensor y = out.detach();
  return record(out, "sqrt", {x}, [y](const Tensor& g) -> std::vector<Tensor> {
    return {binary(g, y, "sqrt", [](auto gv, auto yv) { return gv / (2 * yv); })};
  }, {y});
}

namespace {

// xᵖ, with x^½ = √x and x^-½ = 1/√x as in PyTorch: std::pow(−inf, ½) is +inf (C's rule), the
// square root of a negative number NaN.
template <class T>
T power(T v, double p) {
  if (p == 0.5) return std::sqrt(v);
  if (p == -0.5) return T(1) / std::sqrt(v);
  return std::pow(v, static_cast<T>(p));
}

}  // namespace

// d xᵖ/dx = p·xᵖ⁻¹, and 0 for p = 0 (x⁰ = 1 is constant: p·x⁻¹ would be 0·inf = NaN at x = 0).
Tensor pow(const Tensor& x, double p) {
  Tensor out = unary(x, "pow", [p](auto v) { return power(v, p); });
  return record(out, "pow", {x}, [x, p](const Tensor& g) -> std::vector<Tensor> {
    Tensor d = unary(x, "pow", [p](auto v) {
      using T = decltype(v);
      if (p == 0) return T(0);
      return static_cast<T>(p) * power(v, p - 1);
    });
    return {mul(g, d)};
  });
}

Tensor tanh(const Tensor& x) {
  Tensor out = unary(x, "tanh", [](auto v) { return std::tanh(v); });
  Tensor y = out.detach();
  return record(out, "tanh", {x}, [y](const Tensor& g) -> std::vector<Tensor> {
    return {binary(g, y, "tanh", [](auto gv, auto yv) { return gv * (1 - yv * yv); })};
  }, {y});
}

Tensor sigmoid(const Tensor& x) {
  Tensor out = unary(x, "sigmoid", [](auto v) { return 1 / (1 + std::exp(-v)); });
  Tensor y = out.detach();
  return record(out, "sigmoid", {x}, [y](const Tensor& g) -> std::vector<Tensor> {
    return {binary(g, y, "sigmoid", [](auto gv, auto yv) { return gv * yv * (1 - yv); })};
  }, {y});
}

// erf(u) = 2/√π ∫₀ᵘ exp(−t²) dt, so d/du erf(u) = 2/√π · exp(−u²). (GELU is built on it.)
Tensor erf(const Tensor& x) {
  Tensor out = unary(x, "erf", [](auto v) { return std::erf(v); });
  return record(out, "erf", {x}, [x](const Tensor& g) -> std::vector<Tensor> {
    return {binary(g, x, "erf", [](auto gv, auto xv) {
      using T = decltype(xv);
      return gv * (T(1.12837916709551257390) * std::exp(-xv * xv));  // 2/√π
    })};
  });
}

Tensor relu(const Tensor& x) {
  // A NaN stays NaN (v <= 0 is false for it) and passes its gradient on, as in PyTorch.
  Tensor out = unary(x, "relu", [](auto v) { return v <= 0 ? decltype(v)(0) : v; });
  return record(out, "relu", {x}, [x](const Tensor& g) -> std::vector<Tensor> {
    return {binary(g, x, "relu", [](auto gv, auto xv) { return xv <= 0 ? decltype(gv)(0) : gv; })};
  });
}

Tensor abs(const Tensor& x) {
  Tensor out = unary(x, "abs", [](auto v) { return std::abs(v); });
  return record(out, "abs", {x}, [x](const Tensor& g) -> std::vector<Tensor> {
    return {binary(g, x, "abs", [](auto gv, auto xv) {
      return xv > 0 ? gv : (xv < 0 ? -gv : decltype(gv)(0));
    })};
  });
}

// ---- selection --------------------------------------------------------------------------------

namespace {

// A 0/1 tensor of `like`'s dtype: 1 where cond is nonzero, broadcast to `shape`.
Tensor condition_mask(const Tensor& cond, const Shape& shape, DType dtype, const char* op) {
  check_defined(cond, op);
  Tensor c = Tensor::empty(cond.shape(), dtype);
  for (std::int64_t i = 0; i < cond.numel(); ++i) c.set_flat(i, cond.flat(i) != 0 ? 1.0 : 0.0);
  if (c.shape() == shape) return c;
  Shape target = broadcast_shapes(cond.shape(), shape, op);
  if (target != shape)
    fail(op, ": mask of shape ", shape_str(cond.shape()), " does not broadcast to ",
         shape_str(shape));
  return broadcast_copy(c, shape);
}

}  // namespace

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_float(a, "where");
  check_float(b, "where");
  check_same_dtype(a, b, "where");
  Shape shape = broadcast_shapes(broadcast_shapes(a.shape(), b.shape(), "where"),
                                 cond.shape(), "where");
  Tensor c = condition_mask(cond, shape, a.dtype(), "where");
  // out = b + c·(a − b), computed exactly as a selection:
  Tensor from_a = binary(c, a, "where", [](auto m, auto v) { return m != 0 ? v : decltype(v)(0); });
  Tensor out = binary(from_a, binary(c, b, "where", [](auto m, auto v) {
                        return m != 0 ? decltype(v)(0) : v;
                      }), "where", [](auto x, auto y) { return x + y; });
  return record(out, "where", {a, b}, [c](const Tensor& g) -> std::vector<Tensor> {
    Tensor ga = binary(c, g, "where", [](auto m, auto v) { return m != 0 ? v : decltype(v)(0); });
    Tensor gb = binary(c, g, "where", [](auto m, auto v) { return m != 0 ? decltype(v)(0) : v; });
    return {ga, gb};
  });
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  check_float(x, "masked_fill");
  Tensor c = condition_mask(mask, x.shape(), x.dtype(), "masked_fill");
  Tensor out = binary(x, c, "masked_fill", [value](auto v, auto m) {
    return m != 0 ? static_cast<decltype(v)>(value) : v;
  });
  return record(out, "masked_fill", {x}, [c](const Tensor& g) -> std::vector<Tensor> {
    return {binary(g, c, "masked_fill", [](auto v, auto m) { return m != 0 ? decltype(v)(0) : v; })};
  });
}

Tensor eq(const Tensor& a, const Tensor& b) {
  return binary(a, b, "eq", [](auto x, auto y) { return decltype(x)(x == y); });
}

Tensor gt(const Tensor& a, double s) {
  return unary(a, "gt", [s](auto x) { return decltype(x)(x > s); });
}

// ---- operators ------------------------------------------------------------------------------

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& x) { return neg(x); }
Tensor operator+(const Tensor& a, double s) { return add(a, s); }
Tensor operator+(double s, const Tensor& a) { return add(a, s); }
Tensor operator-(const Tensor& a, double s) { return sub(a, s); }
Tensor operator-(double s, const Tensor& a) { return sub(s, a); }
Tensor operator*(const Tensor& a, double s) { return mul(a, s); }
Tensor operator*(double s, const Tensor& a) { return mul(a, s); }
Tensor operator/(const Tensor& a, double s) { return div(a, s); }
Tensor operator/(double s, const Tensor& a) { return div(s, a); }

void add_inplace(Tensor& dst, const Tensor& src) {
  check_float(dst, "add_inplace");
  check_same_dtype(dst, src, "add_inplace");
  if (dst.shape() != src.shape())
    fail("add_inplace: shapes ", shape_str(dst.shape()), " and ", shape_str(src.shape()),
         " differ");
  dst.bump_version();
  dispatch_float(dst.dtype(), "add_inplace", [&](auto tag) {
    using T = decltype(tag);
    T* d = dst.data<T>();
    const T* s = src.data<T>();
    const std::int64_t n = dst.numel();
    parallel_for(n, n > kParallelThreshold, [&](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) d[i] += s[i];
    });
  });
}

}  // namespace uwaga
