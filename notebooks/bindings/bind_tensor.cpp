// Tensor, DType and Generator, and the ops of core/ as functions and methods. The ops of nn/ with
// hand-derived backward passes (softmax, gelu, cross_entropy, dropout) are here too, at the top
// level: uwaga.softmax, as torch.softmax.
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/elementwise.h"
#include "core/indexing.h"
#include "core/matmul.h"
#include "core/random.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "nn/cross_entropy.h"
#include "nn/dropout.h"
#include "nn/gelu.h"
#include "nn/softmax.h"
#include "notebooks/bindings/bindings.h"

namespace uwaga::python {
namespace {

template <class T>
py::array view_of(const Tensor& t) {
  // The capsule owns a reference to the storage: the array outlives the tensor safely.
  auto* keep = new std::shared_ptr<Storage>(t.impl().storage);
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  return py::array_t<T>(shape, const_cast<T*>(t.data<T>()), base);
}

// What a NumPy dtype kind holds, for the kinds no uwaga dtype can; nullptr for bool and numbers.
const char* unsupported_kind(char kind) {
  switch (kind) {
    case 'b': case 'i': case 'u': case 'f': return nullptr;
    case 'c': return "complex numbers: a tensor would drop the imaginary part";
    case 'U': case 'S': return "strings";
    case 'O': return "Python objects: None, mixed types or integers beyond 64 bits";
    case 'M': return "datetimes";
    case 'm': return "timedeltas";
    default: return "structured records";
  }
}

// NumPy wraps integers beyond int64 around and turns NaN into -2^63 without a word, so the values
// are checked before the conversion. (Floats are truncated toward zero, as int(x) does.)
void check_fits_int64(const py::array& a) {
  const auto bad = [](const std::string& value) {
    return py::value_error("uwaga.tensor: " + value + " does not fit in int64 "
                           "(-2**63 .. 2**63-1, no NaN or inf)");
  };
  if (a.dtype().kind() == 'u') {
    auto u = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    for (py::ssize_t i = 0; i < u.size(); ++i)
      if (u.data()[i] > static_cast<std::uint64_t>(INT64_MAX))
        throw bad(std::to_string(u.data()[i]));
  } else if (a.dtype().kind() == 'f') {
    auto f = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
    for (py::ssize_t i = 0; i < f.size(); ++i) {
      const double v = f.data()[i];
      if (!(v >= -0x1p63 && v < 0x1p63)) throw bad(py::repr(py::float_(v)));  // NaN fails too
    }
  }
}

template <class T>
Tensor copy_into(const py::array& a, DType dtype) {
  // A C-contiguous array of T: `a` itself, or NumPy's converted copy.
  auto c = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!c)
    throw py::type_error("uwaga.tensor: NumPy cannot convert " + std::string(py::str(a.dtype())) +
                         " to " + dtype_name(dtype));
  Shape shape(c.shape(), c.shape() + c.ndim());
  Tensor t = Tensor::empty(shape, dtype);
  if (t.numel() > 0) std::memcpy(t.raw_data(), c.data(), t.numel() * sizeof(T));
  return t;
}

DType default_dtype(const py::array& a) {
  const char kind = a.dtype().kind();
  if (kind == 'f' && a.itemsize() == 8) return DType::Float64;
  if (kind == 'i' || kind == 'u') return DType::Int64;
  return DType::Float32;
}

// An integer from anything Python accepts as an index: int, NumPy integers, objects with
// __index__. A float is refused: reshape(2.0, 3) is a mistake, not a silent 2.
std::int64_t to_int(const py::handle& h, const std::string& what) {
  if (!PyIndex_Check(h.ptr()))
    throw py::type_error(what + " must be integers, got " + type_name(h) + " " +
                         std::string(py::repr(h)));
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
  if (!i) throw py::error_already_set();
  const long long v = PyLong_AsLongLong(i.ptr());  // OverflowError beyond 64 bits
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

// The integers of a sequence (list, tuple, ...), each through to_int.
std::vector<std::int64_t> to_ints(const py::handle& seq, const std::string& what) {
  if (!py::isinstance<py::sequence>(seq) || py::isinstance<py::str>(seq))
    throw py::type_error(what + " must be an integer or a sequence of integers, got " +
                         type_name(seq));
  std::vector<std::int64_t> out;
  for (const py::handle& x : seq) out.push_back(to_int(x, what));
  return out;
}

// One dim or several: t.sum(0), t.sum((0, 1)), t.sum(np.int64(0)).
Dims to_dims(const py::handle& dim, const char* op) {
  const std::string what = std::string(op) + ": dims";
  if (PyIndex_Check(dim.ptr())) return {to_int(dim, what)};
  return to_ints(dim, what);
}

// t.reshape(2, 3) and t.reshape((2, 3)) both work, as in NumPy.
Shape to_shape(const py::args& args, const char* op) {
  const std::string what = std::string(op) + ": sizes";
  if (args.size() == 1 && !PyIndex_Check(args[0].ptr())) return to_ints(args[0], what);
  return to_ints(args, what);
}

// A Python number of a one-element tensor: an int for int64 (exact — through a double, 2**62 + 1
// would lose its last bit), else a float.
py::object item(const Tensor& t) {
  const double v = t.item();  // fails clearly unless there is exactly one element
  if (t.dtype() == DType::Int64) return py::int_(t.data<std::int64_t>()[0]);
  return py::float_(v);
}

// float(t), int(t): only a tensor of one element is a number (as in PyTorch and NumPy).
const Tensor& one_element(const Tensor& t, const char* conversion) {
  check_defined(t, conversion);
  if (t.numel() != 1)
    throw py::type_error(std::string(conversion) + "() of a tensor needs exactly one element; " +
                         "this one has shape " + shape_str(t.shape()));
  return t;
}

// t[i], t[a:b], t[i, a:b, ...]: slice() along each dim, an integer also drops its dim. Copies
// (slice copies), and stays in the graph.
Tensor get_item(const Tensor& x, const py::object& key) {
  py::tuple keys = py::isinstance<py::tuple>(key) ? key.cast<py::tuple>() : py::make_tuple(key);
  if (static_cast<std::int64_t>(keys.size()) > x.dim())
    throw py::index_error("too many indices for a tensor of shape " + shape_str(x.shape()));
  Tensor out = x;
  std::int64_t dim = 0;
  for (const py::handle& k : keys) {
    const std::int64_t n = out.size(dim);
    if (PyIndex_Check(k.ptr())) {  // int, NumPy integers
      std::int64_t i = to_int(k, "tensor indices");
      if (i < -n || i >= n)
        throw py::index_error("index " + std::to_string(i) + " is out of range for dim " +
                              std::to_string(dim) + " of size " + std::to_string(n));
      if (i < 0) i += n;
      out = squeeze(slice(out, dim, i, i + 1), dim);
    } else if (py::isinstance<py::slice>(k)) {
      py::ssize_t start, stop, step, length;
      if (!k.cast<py::slice>().compute(n, &start, &stop, &step, &length))
        throw py::error_already_set();
      if (step < 1) throw py::index_error("tensor slices need a positive step");
      out = slice(out, dim, start, std::max(start, stop), step);
      ++dim;
    } else {
      throw py::type_error("tensor indices are integers and slices");
    }
  }
  return out;
}

}  // namespace

py::array to_numpy(const Tensor& t) {
  check_defined(t, "numpy");
  switch (t.dtype()) {
    case DType::Float32: return view_of<float>(t);
    case DType::Float64: return view_of<double>(t);
    case DType::Int64: return view_of<std::int64_t>(t);
    case DType::BFloat16:  // NumPy has no bfloat16: a uint16 array would pass its bits for numbers
      throw py::type_error("numpy: NumPy has no bfloat16 dtype, so a bfloat16 tensor (shape " +
                           shape_str(t.shape()) + ") has no array; convert it with "
                           "t.to(uwaga.float32) first");
  }
  return {};
}

Tensor from_numpy(const py::handle& obj, std::optional<DType> dtype) {
  // np.asarray(None) is a 0-d object array; say what is wrong in the words of the call.
  if (obj.is_none())
    throw py::type_error("uwaga.tensor: got None; pass a number, a list of numbers or an array");
  // np.asarray's own errors (e.g. a ragged nested list) say what is wrong: they pass through.
  py::array a = py::module_::import("numpy").attr("asarray")(obj);
  const DType d = dtype ? *dtype : default_dtype(a);
  if (const char* holds = unsupported_kind(a.dtype().kind()))
    throw py::type_error("uwaga.tensor: cannot convert " + type_name(obj) + " to " +
                         dtype_name(d) + ": NumPy reads it as dtype " +
                         std::string(py::str(a.dtype())) + " (kind '" + a.dtype().kind() +
                         "', " + holds + "); a tensor holds bools and numbers");
  if (d == DType::Int64) check_fits_int64(a);
  switch (d) {
    case DType::Float32: return copy_into<float>(a, d);
    case DType::Float64: return copy_into<double>(a, d);
    case DType::Int64: return copy_into<std::int64_t>(a, d);
    case DType::BFloat16:  // through float32, rounded by core/bfloat16.h's rule
      return copy_into<float>(a, DType::Float32).to(DType::BFloat16);
  }
  return {};
}

void bind_tensor(py::module_& m) {
  py::enum_<DType>(m, "DType")
      .value("float32", DType::Float32)
      .value("float64", DType::Float64)
      .value("int64", DType::Int64)
      .value("bfloat16", DType::BFloat16);
  m.attr("float32") = DType::Float32;
  m.attr("float64") = DType::Float64;
  m.attr("int64") = DType::Int64;
  m.attr("bfloat16") = DType::BFloat16;

  py::class_<Generator>(m, "Generator",
                        "A seeded source of random numbers (xoshiro256**, Box-Muller).")
      .def(py::init<std::uint64_t>(), py::arg("seed") = 0)
      .def("seed", &Generator::seed_with, py::arg("seed"))
      .def("uniform", &Generator::uniform)
      .def("normal", &Generator::normal)
      .def("below", &Generator::below, py::arg("n"));

  auto make = [](const py::object& data, std::optional<DType> dtype, bool requires_grad,
                 const std::string& name) {
    Tensor t = from_numpy(data, dtype);
    if (requires_grad) t.requires_grad_();
    if (!name.empty()) t.set_name(name);
    return t;
  };
  py::class_<Tensor> T(m, "Tensor", "An n-dimensional array with a place in the autograd graph.");
  T.def(py::init(make), py::arg("data"), py::arg("dtype") = py::none(),
        py::arg("requires_grad") = false, py::arg("name") = "");
  m.def("tensor", make, py::arg("data"), py::arg("dtype") = py::none(),
        py::arg("requires_grad") = false, py::arg("name") = "",
        "A tensor holding a copy of `data` (an array, a list, a number). Strings, None, complex "
        "numbers and dates are refused, and so is a value that does not fit the dtype.");
  m.def("from_numpy", [](const py::array& a) { return from_numpy(a, std::nullopt); },
        py::arg("array"),
        "A tensor holding a COPY of the array, unlike torch.from_numpy (which shares memory): "
        "later writes to the array do not reach the tensor. (t.numpy() is the other way round: "
        "a view of the tensor.)");

  // ---- creation ---------------------------------------------------------------------------------
  m.def("zeros", &Tensor::zeros, py::arg("shape"), py::arg("dtype") = DType::Float32);
  m.def("ones", &Tensor::ones, py::arg("shape"), py::arg("dtype") = DType::Float32);
  m.def("full", &Tensor::full, py::arg("shape"), py::arg("value"),
        py::arg("dtype") = DType::Float32);
  m.def("arange", &Tensor::arange, py::arg("start"), py::arg("end"), py::arg("step") = 1.0,
        py::arg("dtype") = DType::Float32);
  m.def("randn", &Tensor::randn, py::arg("shape"), py::arg("gen"),
        py::arg("dtype") = DType::Float32, py::arg("mean") = 0.0, py::arg("std") = 1.0);
  m.def("uniform", &Tensor::uniform, py::arg("shape"), py::arg("gen"), py::arg("low") = 0.0,
        py::arg("high") = 1.0, py::arg("dtype") = DType::Float32);

  // ---- properties and conversion ----------------------------------------------------------------
  T.def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("size", &Tensor::size, py::arg("dim"))
      .def("numel", &Tensor::numel)
      .def_property("name", &Tensor::name,
                    [](Tensor& t, const std::string& s) { t.set_name(s); })
      .def("numpy", &to_numpy,
           "A NumPy view of the data: no copy, writable, sharing memory with the tensor. Writes "
           "through it are not tracked by autograd's in-place check (like torch's "
           "t.detach().numpy()): after a forward pass, backward() would silently use the new "
           "values. So write only outside a graph: before the forward, or under no_grad.")
      .def("__array__",
           [](const Tensor& t, const py::object& dtype) {
             py::array a = to_numpy(t);
             return dtype.is_none() ? a : py::array(a.attr("astype")(dtype));
           },
           py::arg("dtype") = py::none())
      .def("tolist", [](const Tensor& t) { return to_numpy(t).attr("tolist")(); })
      .def("item", &item, "The one element as a Python int (int64) or float.")
      .def("to", &Tensor::to, py::arg("dtype"))
      .def("double", [](const Tensor& t) { return t.to(DType::Float64); })
      .def("float", [](const Tensor& t) { return t.to(DType::Float32); })
      .def("clone", &Tensor::clone)
      .def("copy_", [](Tensor& t, const Tensor& src) { t.copy_from(src); return t; },
           py::arg("src"))
      .def("fill_", [](Tensor& t, double v) { t.fill_(v); return t; }, py::arg("value"))
      .def("shares_storage_with", &Tensor::shares_storage_with)
      .def("__repr__",
           [](const Tensor& t) {
             std::string s = t.to_string();
             while (!s.empty() && s.back() == '\n') s.pop_back();
             return s;
           })
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.size(0);
           })
      // Python's defaults would make bool(t) len(t) != 0 and float(t) an error; as in PyTorch, a
      // one-element tensor is its number and a larger one is ambiguous.
      .def("__bool__",
           [](const Tensor& t) {
             check_defined(t, "bool");
             if (t.numel() != 1)
               throw py::value_error("the truth value of a tensor with " +
                                     std::to_string(t.numel()) + " elements (shape " +
                                     shape_str(t.shape()) + ") is ambiguous; reduce it "
                                     "first (.sum(), .max()) or index one element");
             return t.item() != 0.0;
           })
      .def("__float__", [](const Tensor& t) { return one_element(t, "float").item(); })
      .def("__int__", [](const Tensor& t) { return py::int_(item(one_element(t, "int"))); })
      .def("__getitem__", &get_item)
      // Rows t[0], t[1], ...; without it Python would iterate a 0-d tensor as empty.
      .def("__iter__", [](const py::object& self) {
        const Tensor& t = self.cast<const Tensor&>();
        if (t.dim() == 0) throw py::type_error("iteration over a 0-d tensor");
        const py::module_ builtins = py::module_::import("builtins");
        return py::iter(builtins.attr("map")(self.attr("__getitem__"),
                                             builtins.attr("range")(t.size(0))));
      });

  // ---- arithmetic (each operator is the C++ op of the same name) --------------------------------
  using TT = Tensor (*)(const Tensor&, const Tensor&);
  using TD = Tensor (*)(const Tensor&, double);
  const auto op = py::is_operator();  // an unmatched operand type gives NotImplemented
  T.def("__add__", static_cast<TT>(&add), op)
      .def("__add__", static_cast<TD>(&add), op)
      .def("__radd__", static_cast<TD>(&add), op)
      .def("__sub__", static_cast<TT>(&sub), op)
      .def("__sub__", static_cast<TD>(&sub), op)
      .def("__rsub__", [](const Tensor& a, double s) { return sub(s, a); }, op)
      .def("__mul__", static_cast<TT>(&mul), op)
      .def("__mul__", static_cast<TD>(&mul), op)
      .def("__rmul__", static_cast<TD>(&mul), op)
      .def("__truediv__", static_cast<TT>(&div), op)
      .def("__truediv__", static_cast<TD>(&div), op)
      .def("__rtruediv__", [](const Tensor& a, double s) { return div(s, a); }, op)
      .def("__neg__", [](const Tensor& a) { return neg(a); })
      .def("__pow__", [](const Tensor& a, double p) { return pow(a, p); }, op)
      .def("__matmul__", &matmul, op);
  // NumPy on the left: without this, `np.float64(2) * t` and `array + t` would be computed by
  // NumPy (through __array__) and return a plain array, outside the graph. With __array_ufunc__ =
  // None NumPy hands them to the reflected operators above instead; a NumPy scalar is a double
  // there, and an array operand is refused below (read as one float it would lose its shape).
  T.attr("__array_ufunc__") = py::none();
  for (const char* name : {"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                           "__truediv__", "__rtruediv__", "__pow__", "__matmul__", "__rmatmul__"})
    T.def(name,
          [name](const Tensor&, const py::array& a) -> Tensor {
            throw py::type_error(std::string("Tensor.") + name + ": the other operand is a "
                                 "NumPy array of shape " + std::string(py::str(a.attr("shape"))) +
                                 "; make it a tensor first with uwaga.tensor(array)");
          },
          op);

  // ---- methods that mirror the functions below --------------------------------------------------
  T.def("sum", [](const Tensor& x, const py::object& dim, bool keepdim) {
         return dim.is_none() ? sum(x) : sum(x, to_dims(dim, "sum"), keepdim);
       }, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("mean", [](const Tensor& x, const py::object& dim, bool keepdim) {
         return dim.is_none() ? mean(x) : mean(x, to_dims(dim, "mean"), keepdim);
       }, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("max", [](const Tensor& x, const py::object& dim, bool keepdim) {
         return dim.is_none() ? max(x) : max(x, to_dims(dim, "max"), keepdim);
       }, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("argmax", &argmax, py::arg("dim"), py::arg("keepdim") = false)
      .def("reshape",
           [](const Tensor& x, const py::args& s) { return reshape(x, to_shape(s, "reshape")); })
      .def("view",
           [](const Tensor& x, const py::args& s) { return view(x, to_shape(s, "view")); })
      .def("permute",
           [](const Tensor& x, const py::args& s) { return permute(x, to_shape(s, "permute")); })
      .def("transpose", &transpose, py::arg("dim0"), py::arg("dim1"))
      .def_property_readonly("T", [](const Tensor& x) {
         if (x.dim() != 2) fail("T: expects a 2-D tensor, got shape ", shape_str(x.shape()));
         return transpose(x, 0, 1);
       })
      .def("flatten", &flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("squeeze", &squeeze, py::arg("dim"))
      .def("unsqueeze", &unsqueeze, py::arg("dim"))
      .def("softmax", &nn::softmax, py::arg("dim"))
      .def("log_softmax", &nn::log_softmax, py::arg("dim"))
      .def("exp", [](const Tensor& x) { return exp(x); })
      .def("log", [](const Tensor& x) { return log(x); })
      .def("sqrt", [](const Tensor& x) { return sqrt(x); })
      .def("tanh", [](const Tensor& x) { return tanh(x); })
      .def("relu", [](const Tensor& x) { return relu(x); })
      .def("sigmoid", [](const Tensor& x) { return sigmoid(x); });

  // ---- functions --------------------------------------------------------------------------------
  m.def("add", static_cast<TT>(&add));
  m.def("sub", static_cast<TT>(&sub));
  m.def("mul", static_cast<TT>(&mul));
  m.def("div", static_cast<TT>(&div));
  m.def("maximum", &maximum);
  m.def("neg", [](const Tensor& x) { return neg(x); });
  m.def("exp", [](const Tensor& x) { return exp(x); });
  m.def("log", [](const Tensor& x) { return log(x); });
  m.def("sqrt", [](const Tensor& x) { return sqrt(x); });
  m.def("pow", [](const Tensor& x, double p) { return pow(x, p); });
  m.def("tanh", [](const Tensor& x) { return tanh(x); });
  m.def("sigmoid", [](const Tensor& x) { return sigmoid(x); });
  m.def("relu", [](const Tensor& x) { return relu(x); });
  m.def("abs", [](const Tensor& x) { return abs(x); });
  m.def("where", &where, py::arg("cond"), py::arg("a"), py::arg("b"));
  m.def("masked_fill", &masked_fill, py::arg("x"), py::arg("mask"), py::arg("value"));
  m.def("sum", [](const Tensor& x, const py::object& dim, bool keepdim) {
    return dim.is_none() ? sum(x) : sum(x, to_dims(dim, "sum"), keepdim);
  }, py::arg("x"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def("mean", [](const Tensor& x, const py::object& dim, bool keepdim) {
    return dim.is_none() ? mean(x) : mean(x, to_dims(dim, "mean"), keepdim);
  }, py::arg("x"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def("var", [](const Tensor& x, const py::object& dim, bool keepdim, int correction) {
    return var(x, to_dims(dim, "var"), keepdim, correction);
  }, py::arg("x"), py::arg("dim"), py::arg("keepdim") = false, py::arg("correction") = 1);
  m.def("argmax", &argmax, py::arg("x"), py::arg("dim"), py::arg("keepdim") = false);
  m.def("matmul", &matmul, py::arg("a"), py::arg("b"));
  m.def("linear",
        [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
          return linear(x, w, b.value_or(Tensor()));  // None: no bias
        },
        py::arg("x"), py::arg("weight"), py::arg("bias") = py::none());
  m.def("reshape", &reshape, py::arg("x"), py::arg("shape"));
  m.def("transpose", &transpose, py::arg("x"), py::arg("dim0"), py::arg("dim1"));
  m.def("permute", &permute, py::arg("x"), py::arg("order"));
  m.def("expand", &expand, py::arg("x"), py::arg("shape"));
  m.def("slice", &slice, py::arg("x"), py::arg("dim"), py::arg("start"), py::arg("end"),
        py::arg("step") = 1);
  m.def("cat", &cat, py::arg("tensors"), py::arg("dim"));
  m.def("stack", &stack, py::arg("tensors"), py::arg("dim"));
  m.def("chunk", &chunk, py::arg("x"), py::arg("chunks"), py::arg("dim"));
  m.def("split", [](const Tensor& x, std::int64_t size, std::int64_t dim) {
    return split(x, size, dim);
  }, py::arg("x"), py::arg("split_size"), py::arg("dim"));
  m.def("index_select", &index_select, py::arg("x"), py::arg("dim"), py::arg("index"));
  m.def("gather", &gather, py::arg("x"), py::arg("dim"), py::arg("index"));
  m.def("embedding", &embedding, py::arg("weight"), py::arg("ids"));
  m.def("softmax", &nn::softmax, py::arg("x"), py::arg("dim"), "One node, hand-derived backward.");
  m.def("softmax_composed", &nn::softmax_composed, py::arg("x"), py::arg("dim"),
        "exp(x - max) / sum(exp(x - max)) from primitives: autograd derives the backward.");
  m.def("log_softmax", &nn::log_softmax, py::arg("x"), py::arg("dim"));
  m.def("log_softmax_composed", &nn::log_softmax_composed, py::arg("x"), py::arg("dim"));
  m.def("gelu", &nn::gelu, py::arg("x"));
  m.def("gelu_composed", &nn::gelu_composed, py::arg("x"));
  m.def("gelu_tanh", &nn::gelu_tanh, py::arg("x"));
  m.def("gelu_tanh_composed", &nn::gelu_tanh_composed, py::arg("x"));
  m.def("cross_entropy", [](const Tensor& logits, const Tensor& targets, std::int64_t ignore,
                            double smoothing) {
    return nn::cross_entropy(logits, targets, {ignore, smoothing});
  }, py::arg("logits"), py::arg("targets"), py::arg("ignore_index") = -100,
     py::arg("label_smoothing") = 0.0);
  m.def("cross_entropy_composed", [](const Tensor& logits, const Tensor& targets,
                                     std::int64_t ignore, double smoothing) {
    return nn::cross_entropy_composed(logits, targets, {ignore, smoothing});
  }, py::arg("logits"), py::arg("targets"), py::arg("ignore_index") = -100,
     py::arg("label_smoothing") = 0.0);
  m.def("dropout", &nn::dropout, py::arg("x"), py::arg("p"), py::arg("training"), py::arg("gen"));
}

}  // namespace uwaga::python
