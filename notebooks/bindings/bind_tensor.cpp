// Tensor, DType and Generator, and the ops of core/ as functions and methods.
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/cross_entropy.h"
#include "core/dropout.h"
#include "core/elementwise.h"
#include "core/gelu.h"
#include "core/indexing.h"
#include "core/matmul.h"
#include "core/random.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "core/softmax.h"
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

template <class T>
Tensor copy_into(const py::handle& obj, DType dtype) {
  auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(obj);
  if (!a) throw py::error_already_set();
  Shape shape(a.shape(), a.shape() + a.ndim());
  Tensor t = Tensor::empty(shape, dtype);
  if (t.numel() > 0) std::memcpy(t.raw_data(), a.data(), t.numel() * sizeof(T));
  return t;
}

DType default_dtype(const py::array& a) {
  const char kind = a.dtype().kind();
  if (kind == 'f' && a.itemsize() == 8) return DType::Float64;
  if (kind == 'i' || kind == 'u') return DType::Int64;
  return DType::Float32;
}

Dims to_dims(const py::object& dim) {
  if (py::isinstance<py::int_>(dim)) return {dim.cast<std::int64_t>()};
  return dim.cast<Dims>();
}

Shape to_shape(const py::args& args) {
  // t.reshape(2, 3) and t.reshape((2, 3)) both work, as in NumPy.
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0])) return args[0].cast<Shape>();
  return args.cast<Shape>();
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
    if (py::isinstance<py::int_>(k)) {
      std::int64_t i = k.cast<std::int64_t>();
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
  }
  return {};
}

Tensor from_numpy(const py::handle& obj, std::optional<DType> dtype) {
  py::array a = py::array::ensure(obj);
  if (!a) throw py::type_error("uwaga.tensor: cannot make an array of this object");
  const DType d = dtype ? *dtype : default_dtype(a);
  switch (d) {
    case DType::Float32: return copy_into<float>(a, d);
    case DType::Float64: return copy_into<double>(a, d);
    case DType::Int64: return copy_into<std::int64_t>(a, d);
  }
  return {};
}

void bind_tensor(py::module_& m) {
  py::enum_<DType>(m, "DType")
      .value("float32", DType::Float32)
      .value("float64", DType::Float64)
      .value("int64", DType::Int64);
  m.attr("float32") = DType::Float32;
  m.attr("float64") = DType::Float64;
  m.attr("int64") = DType::Int64;

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
        "A tensor holding a copy of `data` (an array, a list, a number).");
  m.def("from_numpy", [](const py::array& a) { return from_numpy(a, std::nullopt); },
        py::arg("array"));

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
      .def("numpy", &to_numpy, "A NumPy view of the data (no copy).")
      .def("__array__",
           [](const Tensor& t, const py::object& dtype) {
             py::array a = to_numpy(t);
             return dtype.is_none() ? a : py::array(a.attr("astype")(dtype));
           },
           py::arg("dtype") = py::none())
      .def("tolist", [](const Tensor& t) { return to_numpy(t).attr("tolist")(); })
      .def("item", &Tensor::item)
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
      .def("__len__", [](const Tensor& t) { return t.dim() ? t.size(0) : 0; })
      .def("__getitem__", &get_item);

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

  // ---- methods that mirror the functions below --------------------------------------------------
  T.def("sum", [](const Tensor& x, const py::object& dim, bool keepdim) {
         return dim.is_none() ? sum(x) : sum(x, to_dims(dim), keepdim);
       }, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("mean", [](const Tensor& x, const py::object& dim, bool keepdim) {
         return dim.is_none() ? mean(x) : mean(x, to_dims(dim), keepdim);
       }, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("max", [](const Tensor& x, const py::object& dim, bool keepdim) {
         return dim.is_none() ? max(x) : max(x, to_dims(dim), keepdim);
       }, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("argmax", &argmax, py::arg("dim"), py::arg("keepdim") = false)
      .def("reshape", [](const Tensor& x, const py::args& s) { return reshape(x, to_shape(s)); })
      .def("view", [](const Tensor& x, const py::args& s) { return view(x, to_shape(s)); })
      .def("permute", [](const Tensor& x, const py::args& s) { return permute(x, to_shape(s)); })
      .def("transpose", &transpose, py::arg("dim0"), py::arg("dim1"))
      .def_property_readonly("T", [](const Tensor& x) {
         if (x.dim() != 2) fail("T: expects a 2-D tensor, got shape ", shape_str(x.shape()));
         return transpose(x, 0, 1);
       })
      .def("flatten", &flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("squeeze", &squeeze, py::arg("dim"))
      .def("unsqueeze", &unsqueeze, py::arg("dim"))
      .def("softmax", &softmax, py::arg("dim"))
      .def("log_softmax", &log_softmax, py::arg("dim"))
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
    return dim.is_none() ? sum(x) : sum(x, to_dims(dim), keepdim);
  }, py::arg("x"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def("mean", [](const Tensor& x, const py::object& dim, bool keepdim) {
    return dim.is_none() ? mean(x) : mean(x, to_dims(dim), keepdim);
  }, py::arg("x"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def("var", [](const Tensor& x, const py::object& dim, bool keepdim, int correction) {
    return var(x, to_dims(dim), keepdim, correction);
  }, py::arg("x"), py::arg("dim"), py::arg("keepdim") = false, py::arg("correction") = 1);
  m.def("argmax", &argmax, py::arg("x"), py::arg("dim"), py::arg("keepdim") = false);
  m.def("matmul", &matmul, py::arg("a"), py::arg("b"));
  m.def("linear", &linear, py::arg("x"), py::arg("weight"), py::arg("bias") = Tensor());
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
  m.def("softmax", &softmax, py::arg("x"), py::arg("dim"), "One node, hand-derived backward.");
  m.def("softmax_composed", &softmax_composed, py::arg("x"), py::arg("dim"),
        "exp(x - max) / sum(exp(x - max)) from primitives: autograd derives the backward.");
  m.def("log_softmax", &log_softmax, py::arg("x"), py::arg("dim"));
  m.def("log_softmax_composed", &log_softmax_composed, py::arg("x"), py::arg("dim"));
  m.def("gelu", &gelu, py::arg("x"));
  m.def("gelu_composed", &gelu_composed, py::arg("x"));
  m.def("cross_entropy", [](const Tensor& logits, const Tensor& targets, std::int64_t ignore,
                            double smoothing) {
    return cross_entropy(logits, targets, {ignore, smoothing});
  }, py::arg("logits"), py::arg("targets"), py::arg("ignore_index") = -100,
     py::arg("label_smoothing") = 0.0);
  m.def("cross_entropy_composed", [](const Tensor& logits, const Tensor& targets,
                                     std::int64_t ignore, double smoothing) {
    return cross_entropy_composed(logits, targets, {ignore, smoothing});
  }, py::arg("logits"), py::arg("targets"), py::arg("ignore_index") = -100,
     py::arg("label_smoothing") = 0.0);
  m.def("dropout", &dropout, py::arg("x"), py::arg("p"), py::arg("training"), py::arg("gen"));
}

}  // namespace uwaga::python
