#include "core/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "core/bfloat16.h"
#include "core/graph.h"

namespace uwaga {
namespace {

std::shared_ptr<TensorImpl> new_impl(const Shape& shape, DType dtype) {
  for (auto s : shape)
    if (s < 0) fail("tensor: negative size in shape ", shape_str(shape));
  const std::int64_t n = numel(shape);  // fails when the element count overflows
  // Bytes are capped at 2⁶² so that the allocator's rounding and size arithmetic cannot wrap
  // either; no machine has that much memory anyway.
  constexpr std::int64_t kMaxBytes = std::int64_t(1) << 62;
  const auto element = static_cast<std::int64_t>(dtype_size(dtype));
  if (n > kMaxBytes / element)
    fail("tensor: shape ", shape_str(shape), " of ", dtype_name(dtype), " (", n,
         " elements of ", element, " bytes) needs more than the 2^62 bytes a tensor may have");
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->storage = std::make_shared<Storage>(static_cast<std::size_t>(n * element));
  return impl;
}

double read(const Tensor& t, std::int64_t i) {
  switch (t.dtype()) {
    case DType::Float32: return t.data<float>()[i];
    case DType::Float64: return t.data<double>()[i];
    case DType::Int64: return static_cast<double>(t.data<std::int64_t>()[i]);
    case DType::BFloat16: return bfloat16_to_float(t.data<bfloat16_bits>()[i]);
  }
  return 0;
}

void write(Tensor& t, std::int64_t i, double v) {
  switch (t.dtype()) {
    case DType::Float32: t.data<float>()[i] = static_cast<float>(v); break;
    case DType::Float64: t.data<double>()[i] = v; break;
    case DType::Int64: t.data<std::int64_t>()[i] = static_cast<std::int64_t>(v); break;
    case DType::BFloat16: t.data<bfloat16_bits>()[i] = double_to_bfloat16(v); break;
  }
}

std::int64_t flat_index(const Tensor& t, std::initializer_list<std::int64_t> index) {
  if (static_cast<std::int64_t>(index.size()) != t.dim())
    fail("at: index has ", index.size(), " coordinates for a tensor of shape ",
         shape_str(t.shape()));
  std::int64_t flat = 0, d = 0;
  for (auto i : index) {
    std::int64_t size = t.shape()[d];
    if (i < 0 || i >= size)
      fail("at: index ", i, " is out of range for dim ", d, " of size ", size, " (shape ",
           shape_str(t.shape()), ")");
    flat = flat * size + i;
    ++d;
  }
  return flat;
}

}  // namespace

// ---- creation -----------------------------------------------------------------------------

Tensor Tensor::empty(const Shape& shape, DType dtype) { return Tensor(new_impl(shape, dtype)); }

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  std::memset(t.raw_data(), 0, static_cast<std::size_t>(t.numel()) * dtype_size(dtype));
  return t;
}

Tensor Tensor::ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }

Tensor Tensor::full(const Shape& shape, double value, DType dtype) {
  Tensor t = empty(shape, dtype);
  t.fill_(value);
  return t;
}

Tensor Tensor::arange(double start, double end, double step, DType dtype) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    fail("arange: start ", start, ", end ", end, ", step ", step, " do not define a range");
  const double count = std::ceil((end - start) / step);
  // Casting a double beyond int64's range to int64 is undefined (it gave 0 elements for 1e30).
  if (!(count < 9.2e18))
    fail("arange: start ", start, ", end ", end, ", step ", step, " give ", count,
         " elements, more than a tensor can hold");
  Tensor t = empty({count > 0 ? static_cast<std::int64_t>(count) : 0}, dtype);
  for (std::int64_t i = 0; i < t.numel(); ++i) write(t, i, start + static_cast<double>(i) * step);
  return t;
}

Tensor Tensor::from_vector(const std::vector<double>& values, const Shape& shape, DType dtype) {
  if (static_cast<std::int64_t>(values.size()) != uwaga::numel(shape))
    fail("from_vector: ", values.size(), " values do not fill shape ", shape_str(shape), " (",
         uwaga::numel(shape), " elements)");
  Tensor t = empty(shape, dtype);
  for (std::size_t i = 0; i < values.size(); ++i) write(t, static_cast<std::int64_t>(i), values[i]);
  return t;
}

Tensor Tensor::from_indices(const std::vector<std::int64_t>& values, const Shape& shape) {
  if (static_cast<std::int64_t>(values.size()) != uwaga::numel(shape))
    fail("from_indices: ", values.size(), " values do not fill shape ", shape_str(shape));
  Tensor t = empty(shape, DType::Int64);
  if (!values.empty())
    std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(std::int64_t));
  return t;
}

Tensor Tensor::scalar(double value, DType dtype) { return full({}, value, dtype); }

Tensor Tensor::randn(const Shape& shape, Generator& gen, DType dtype, double mean, double std) {
  Tensor t = empty(shape, dtype);
  dispatch_float(dtype, "randn", [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(mean + std * gen.normal());
  });
  return t;
}

Tensor Tensor::uniform(const Shape& shape, Generator& gen, double low, double high, DType dtype) {
  if (!(low <= high)) fail("uniform: low ", low, " is greater than high ", high);
  Tensor t = empty(shape, dtype);
  dispatch_float(dtype, "uniform", [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (std::int64_t i = 0; i < t.numel(); ++i)
      p[i] = static_cast<T>(low + (high - low) * gen.uniform());
  });
  return t;
}

// ---- properties -----------------------------------------------------------------------------

TensorImpl& Tensor::impl() const {
  if (!impl_) throw Error("tensor: use of an undefined tensor");
  return *impl_;
}

std::int64_t Tensor::size(std::int64_t d) const { return shape()[normalize_dim(d, dim(), "size")]; }

Tensor& Tensor::set_name(std::string name) {
  impl().name = std::move(name);
  return *this;
}

bool Tensor::shares_storage_with(const Tensor& other) const {
  return impl().storage == other.impl().storage;
}

// ---- element access -------------------------------------------------------------------------

double Tensor::item() const {
  if (numel() != 1)
    fail("item: tensor of shape ", shape_str(shape()), " has ", numel(), " elements, not 1");
  return read(*this, 0);
}

double Tensor::at(std::initializer_list<std::int64_t> index) const {
  return read(*this, flat_index(*this, index));
}

void Tensor::set(std::initializer_list<std::int64_t> index, double value) {
  write(*this, flat_index(*this, index), value);
  bump_version();
}

double Tensor::flat(std::int64_t i) const {
  if (i < 0 || i >= numel())
    fail("flat: index ", i, " is out of range for ", numel(), " elements");
  return read(*this, i);
}

void Tensor::set_flat(std::int64_t i, double value) {
  if (i < 0 || i >= numel())
    fail("set_flat: index ", i, " is out of range for ", numel(), " elements");
  write(*this, i, value);
  bump_version();
}

std::vector<double> Tensor::to_vector() const {
  std::vector<double> out(static_cast<std::size_t>(numel()));
  for (std::int64_t i = 0; i < numel(); ++i) out[static_cast<std::size_t>(i)] = read(*this, i);
  return out;
}

std::vector<std::int64_t> Tensor::to_indices() const {
  if (dtype() != DType::Int64) fail("to_indices: tensor has dtype ", dtype_name(dtype()));
  const std::int64_t* p = data<std::int64_t>();
  return std::vector<std::int64_t>(p, p + numel());
}

// ---- conversion and copies ------------------------------------------------------------------

Tensor Tensor::to(DType target) const {
  if (target == dtype()) return *this;
  Tensor out = empty(shape(), target);
  out.copy_from(*this);
  if (!is_floating() || !out.is_floating()) return out;  // int64 and bfloat16: no graph
  DType source = dtype();
  return record(out, "to", {*this}, [source](const Tensor& g) -> std::vector<Tensor> {
    return {g.to(source)};
  });
}

Tensor Tensor::clone() const {
  Tensor out = empty(shape(), dtype());
  std::memcpy(out.raw_data(), raw_data(), static_cast<std::size_t>(numel()) * dtype_size(dtype()));
  if (!is_floating()) return out;
  return record(out, "clone", {*this}, [](const Tensor& g) -> std::vector<Tensor> { return {g}; });
}

void Tensor::copy_from(const Tensor& src) {
  if (src.shape() != shape())
    fail("copy_from: source shape ", shape_str(src.shape()), " differs from destination shape ",
         shape_str(shape()));
  bump_version();
  if (src.dtype() == dtype()) {
    std::memcpy(raw_data(), src.raw_data(), static_cast<std::size_t>(numel()) * dtype_size(dtype()));
    return;
  }
  // float32 ↔ bfloat16, the pair a bfloat16 copy of weights is made and read with: the bulk
  // conversions, which give the same bits as the element-by-element rule below.
  if (src.dtype() == DType::Float32 && dtype() == DType::BFloat16) {
    float_to_bfloat16(src.data<float>(), data<bfloat16_bits>(), numel());
    return;
  }
  if (src.dtype() == DType::BFloat16 && dtype() == DType::Float32) {
    bfloat16_to_float(src.data<bfloat16_bits>(), data<float>(), numel());
    return;
  }
  const std::int64_t n = numel();
  for (std::int64_t i = 0; i < n; ++i) write(*this, i, read(src, i));
}

void Tensor::fill_(double value) {
  bump_version();
  switch (dtype()) {
    case DType::Float32: std::fill_n(data<float>(), numel(), static_cast<float>(value)); break;
    case DType::Float64: std::fill_n(data<double>(), numel(), value); break;
    case DType::Int64:
      std::fill_n(data<std::int64_t>(), numel(), static_cast<std::int64_t>(value));
      break;
    case DType::BFloat16:
      std::fill_n(data<bfloat16_bits>(), numel(), double_to_bfloat16(value));
      break;
  }
}

// ---- autograd -------------------------------------------------------------------------------

Tensor& Tensor::requires_grad_(bool on) {
  if (on && dtype() == DType::Int64)
    fail("requires_grad_: int64 tensors (indices, labels) cannot require a gradient");
  if (on && dtype() == DType::BFloat16)
    fail("requires_grad_: a bfloat16 tensor only stores values and cannot require a gradient; "
         "train in float32 (.to(DType::Float32)) and convert to bfloat16 to store");
  if (!on && !is_leaf())
    fail("requires_grad_: cannot turn off gradients of a non-leaf tensor (made by '",
         grad_fn()->op, "'); use detach()");
  impl().requires_grad = on;
  return *this;
}

Tensor Tensor::grad() const { return impl().grad ? Tensor(impl().grad) : Tensor(); }

void Tensor::set_grad(const Tensor& g) {
  if (g.defined() && g.shape() != shape())
    fail("set_grad: gradient shape ", shape_str(g.shape()), " differs from tensor shape ",
         shape_str(shape()));
  if (g.defined() && g.dtype() != dtype())
    fail("set_grad: gradient dtype ", dtype_name(g.dtype()), " differs from tensor dtype ",
         dtype_name(dtype()));
  impl().grad = g.defined() ? g.impl_ptr() : nullptr;
}

void Tensor::zero_grad() { impl().grad = nullptr; }

// Tensor::backward() is defined with the engine it calls, in core/autograd.cpp.

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = this->impl().storage;
  impl->shape = shape();
  impl->dtype = dtype();
  return Tensor(impl);
}

// ---- printing -------------------------------------------------------------------------------

namespace {

void print_values(std::ostream& out, const Tensor& t, std::int64_t dim, std::int64_t offset,
                  int indent) {
  const Shape& shape = t.shape();
  const std::int64_t n = shape[dim];
  const std::int64_t edge = 3;  // elements shown at each end of a long dimension
  const bool truncate = n > 2 * edge + 1 && t.numel() > 1000;
  std::int64_t stride = 1;
  for (std::size_t d = dim + 1; d < shape.size(); ++d) stride *= shape[d];
  out << '[';
  for (std::int64_t i = 0; i < n; ++i) {
    if (truncate && i == edge) {
      out << (dim + 1 == t.dim() ? "..., " : "...,\n" + std::string(indent + 1, ' '));
      i = n - edge;
    }
    if (dim + 1 == t.dim()) {
      double v = t.flat(offset + i);
      if (t.dtype() == DType::Int64) out << static_cast<std::int64_t>(v);
      else out << std::setprecision(4) << v;
    } else {
      print_values(out, t, dim + 1, offset + i * stride, indent + 1);
    }
    if (i + 1 < n) out << (dim + 1 == t.dim() ? ", " : ",\n" + std::string(indent + 1, ' '));
  }
  out << ']';
}

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  std::ostringstream out;
  out << "tensor(shape=" << shape_str(shape()) << ", dtype=" << dtype_name(dtype());
  if (requires_grad()) out << ", requires_grad";
  if (grad_fn()) out << ", grad_fn=" << grad_fn()->op;
  out << ")\n";
  if (dim() == 0) out << flat(0);
  else if (numel() == 0) out << "[]";
  else print_values(out, *this, 0, 0, 0);
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) { return out << t.to_string(); }

// ---- checks shared by ops -------------------------------------------------------------------

void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) fail(op, ": got an undefined tensor");
}

void fail_not_float(const char* op, DType dtype, const Shape* shape) {
  const std::string of_shape = shape ? " of shape " + shape_str(*shape) : std::string();
  if (dtype == DType::BFloat16)
    fail(op, ": expects a float32 or float64 tensor, got bfloat16", of_shape,
         "; bfloat16 only stores values: compute on .to(DType::Float32)");
  fail(op, ": expects a float32 or float64 tensor, got ", dtype_name(dtype), of_shape);
}

void check_float(const Tensor& t, const char* op) {
  check_defined(t, op);
  if (!t.is_floating()) fail_not_float(op, t.dtype(), &t.shape());
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype())
    fail(op, ": dtypes differ: ", dtype_name(a.dtype()), " ", shape_str(a.shape()), " and ",
         dtype_name(b.dtype()), " ", shape_str(b.shape()));
}

}  // namespace uwaga
