#pragma once
// The `uwaga` Python module (pybind11), one file per concept. Binding code only converts between
// Python and C++ and forwards: every formula lives in the C++ library.
//
// Tensors and NumPy: Tensor.numpy() (and np.asarray(t)) is a view of the tensor's storage — no
// copy; writing through it writes the tensor (autograd does not see such writes). uwaga.tensor(array)
// and uwaga.from_numpy(array) copy once, because a Storage owns its aligned buffer.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "nn/scaled_dot_product_attention.h"

namespace uwaga::python {

namespace py = pybind11;

void bind_tensor(py::module_& m);    // Tensor, DType, Generator, the ops of core/
void bind_autograd(py::module_& m);  // backward, no_grad, the graph's nodes, gradcheck, to_dot
void bind_nn(py::module_& m);        // uwaga.nn: modules and attention functions
void bind_optim(py::module_& m);     // uwaga.optim: optimizers, schedules, trainer, checkpoints
void bind_data(py::module_& m);      // uwaga.data: image datasets, loader, translation corpus
void bind_apps(py::module_& m);      // uwaga.apps: presets, training, translation, attention maps

// A NumPy view of t's storage (no copy); the array keeps the storage alive.
py::array to_numpy(const Tensor& t);
// A tensor holding a copy of `obj` (numbers, anything np.asarray turns into bools or numbers).
// Without a dtype: float32 and float64 stay, integers become int64, other floats and bools become
// float32. Strings, objects, complex numbers and dates are a TypeError; so is a value int64 cannot
// hold exactly (NaN, 1e19, 2**63) — never a silent wrap-around.
Tensor from_numpy(const py::handle& obj, std::optional<DType> dtype);

// Token ids from Python — a list, tuple or 1-D array of integers — for `what` (the argument,
// named in the TypeError a float, a string or a 2-D array gets). Copied once.
std::vector<std::int64_t> ids_from(const py::handle& obj, const std::string& what);
// Token ids as a 1-D int64 NumPy array (a copy).
py::array ids_to_numpy(const std::vector<std::int64_t>& ids);
// Bytes as a Python str, decoded as UTF-8: a byte that forms no character (a character-level model
// may write half of a multi-byte one) shows as U+FFFD instead of raising.
py::str text_of(const std::string& bytes);

// The Python type name of obj ("int", "NoneType", "Linear"), for error messages.
std::string type_name(const py::handle& obj);

// An AttentionMask from the keyword arguments the Python functions take.
nn::AttentionMask make_mask(const std::optional<Tensor>& key_padding, bool causal);

// One Python property per field of T's list, the one its JSON uses (T::fields, core/json_fields.h):
// a field added to a run configuration reaches Python without a line here. The fields named in
// `read_only` get no setter (a function that keeps the struct consistent sets them, as
// set_pose_data does); `read_only_doc` is their docstring.
template <class T, class... Options>
py::class_<T, Options...>& bind_fields(py::class_<T, Options...>& cls,
                                       std::initializer_list<const char*> read_only = {},
                                       const char* read_only_doc = "") {
  T::fields([&](const char* name, auto member) {
    const bool fixed = std::any_of(read_only.begin(), read_only.end(),
                                   [&](const char* r) { return std::string(r) == name; });
    if (fixed) cls.def_readonly(name, member, read_only_doc);
    else cls.def_readwrite(name, member);
  });
  return cls;
}

// The directory CMake configured the module from (the repository root), for finding data.
std::string source_dir();

}  // namespace uwaga::python
