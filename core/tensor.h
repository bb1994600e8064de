#pragma once
// Tensor: an n-dimensional array with a shape, a dtype and (optionally) a place in the autograd
// graph. A Tensor is a cheap handle: copying it shares the same data and graph node, like a
// Python reference.
//
// Memory: storage is always row-major and contiguous. reshape / view / squeeze / unsqueeze /
// flatten / detach share the storage of their input (writing through one is seen by the other).
// transpose / permute / slice / expand copy into fresh storage — simple kernels, and every
// kernel can assume contiguity.
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/random.h"
#include "core/shape.h"
#include "core/storage.h"

namespace uwaga {

struct Node;
class Tensor;

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  DType dtype = DType::Float32;
  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;  // filled by backward() on leaves
  std::shared_ptr<Node> grad_fn;     // the op that produced this tensor (null on leaves)
  std::string name;                  // optional, shown by the DOT graph (e.g. a parameter name)
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor; defined() is false
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- creation ---------------------------------------------------------------------------
  static Tensor empty(const Shape& shape, DType dtype = DType::Float32);  // uninitialised
  static Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
  static Tensor ones(const Shape& shape, DType dtype = DType::Float32);
  static Tensor full(const Shape& shape, double value, DType dtype = DType::Float32);
  static Tensor arange(double start, double end, double step = 1.0, DType dtype = DType::Float32);
  // From row-major values; values.size() must equal numel(shape).
  static Tensor from_vector(const std::vector<double>& values, const Shape& shape,
                            DType dtype = DType::Float32);
  static Tensor from_indices(const std::vector<std::int64_t>& values, const Shape& shape);
  static Tensor scalar(double value, DType dtype = DType::Float32);
  static Tensor randn(const Shape& shape, Generator& gen, DType dtype = DType::Float32,
                      double mean = 0.0, double std = 1.0);
  static Tensor uniform(const Shape& shape, Generator& gen, double low = 0.0, double high = 1.0,
                        DType dtype = DType::Float32);
  static Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype()); }
  static Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype()); }
  static Tensor empty_like(const Tensor& t) { return empty(t.shape(), t.dtype()); }

  // ---- properties ---------------------------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl().shape; }
  std::int64_t dim() const { return static_cast<std::int64_t>(impl().shape.size()); }
  std::int64_t size(std::int64_t d) const;  // negative d counts from the end
  std::int64_t numel() const { return uwaga::numel(impl().shape); }
  DType dtype() const { return impl().dtype; }
  // float32 or float64: the dtypes ops compute in and autograd differentiates. bfloat16 is a
  // floating-point format too, but only stored (core/dtype.h), so not "floating" here.
  bool is_floating() const { return dtype() == DType::Float32 || dtype() == DType::Float64; }
  const std::string& name() const { return impl().name; }
  Tensor& set_name(std::string name);

  // ---- raw data -----------------------------------------------------------------------------
  // data<T>() checks that T matches the dtype.
  template <class T> T* data();
  template <class T> const T* data() const;
  void* raw_data() { return impl().storage->data(); }
  const void* raw_data() const { return impl().storage->data(); }
  bool shares_storage_with(const Tensor& other) const;
  // How many times the storage's values were changed in place (core/storage.h). Code that writes
  // into an existing tensor through data<T>() calls bump_version() afterwards, as the in-place
  // methods below do, so backward() can tell when a value an op saved has changed.
  std::uint64_t version() const { return impl().storage->version(); }
  void bump_version() { impl().storage->bump_version(); }

  // ---- element access (for tests and printing; slow, bounds-checked) ------------------------
  double item() const;  // the only element of a one-element tensor
  double at(std::initializer_list<std::int64_t> index) const;
  void set(std::initializer_list<std::int64_t> index, double value);
  double flat(std::int64_t i) const;  // i-th element in row-major order
  void set_flat(std::int64_t i, double value);
  std::vector<double> to_vector() const;
  std::vector<std::int64_t> to_indices() const;  // int64 tensors

  // ---- conversion and copies ----------------------------------------------------------------
  // Differentiable between float32 and float64. To bfloat16: rounded to nearest even
  // (core/bfloat16.h); back: exact. A bfloat16 tensor is outside autograd, a stored value: the
  // result of converting to or from it has no graph (a gradient does not flow through it).
  Tensor to(DType dtype) const;
  Tensor clone() const;          // a copy with its own storage, differentiable
  // Copies values from `src` (same shape; any dtype) into this tensor's storage, outside autograd.
  void copy_from(const Tensor& src);
  void fill_(double value);       // outside autograd

  // ---- autograd -----------------------------------------------------------------------------
  bool requires_grad() const { return impl().requires_grad; }
  // Marks a leaf as a parameter/input whose gradient backward() should compute.
  Tensor& requires_grad_(bool on = true);
  bool is_leaf() const { return impl().grad_fn == nullptr; }
  Tensor grad() const;  // undefined until backward() reaches this leaf
  void set_grad(const Tensor& g);
  void zero_grad();  // drops the gradient
  const std::shared_ptr<Node>& grad_fn() const { return impl().grad_fn; }
  // Reverse-mode differentiation from this tensor. Without an argument the tensor must hold one
  // element (a loss); otherwise `grad_output` has this tensor's shape. The graph is freed after
  // use unless retain_graph is true. The engine: core/autograd.h.
  void backward(bool retain_graph = false) const;
  void backward(const Tensor& grad_output, bool retain_graph = false) const;
  // A tensor sharing this one's storage, cut from the graph.
  Tensor detach() const;

  // ---- printing -----------------------------------------------------------------------------
  std::string to_string() const;  // shape, dtype and values (truncated when large)

  TensorImpl& impl() const;
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& out, const Tensor& t);

// The error of an op given a tensor it cannot compute on (int64, bfloat16): names the op, the
// dtype and, for bfloat16, the way out.
[[noreturn]] void fail_not_float(const char* op, DType dtype, const Shape* shape = nullptr);

// ---- dtype dispatch: calls fn(T{}) with T = float or double, or throws for int64, bfloat16 -
template <class Fn>
decltype(auto) dispatch_float(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: return fn(float{});
    case DType::Float64: return fn(double{});
    default: break;
  }
  fail_not_float(op, dtype);
}

// ---- dispatch for ops that only move elements (shape ops, gathering): any dtype --------------
template <class Fn>
void dispatch_any(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: fn(float{}); break;
    case DType::Float64: fn(double{}); break;
    case DType::Int64: fn(std::int64_t{}); break;
    case DType::BFloat16: fn(bfloat16_bits{}); break;  // moved as bits, never computed on
  }
}

// Checks shared by ops.
void check_defined(const Tensor& t, const char* op);
void check_float(const Tensor& t, const char* op);
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op);

template <class T> T* Tensor::data() {
  if (dtype_of<T>() != dtype())
    fail("data: tensor has dtype ", dtype_name(dtype()), ", requested ", dtype_name(dtype_of<T>()));
  return static_cast<T*>(impl().storage->data());
}
template <class T> const T* Tensor::data() const {
  if (dtype_of<T>() != dtype())
    fail("data: tensor has dtype ", dtype_name(dtype()), ", requested ", dtype_name(dtype_of<T>()));
  return static_cast<const T*>(impl().storage->data());
}

// The data of an optional tensor (a bias that may be absent): nullptr when t is undefined.
template <class T> const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

}  // namespace uwaga
