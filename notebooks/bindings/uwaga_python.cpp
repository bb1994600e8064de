// The `uwaga` Python module: _uwaga, imported by the package's __init__.py.
#include "notebooks/bindings/bindings.h"

#include "core/error.h"
#include "core/threads.h"
#include "core/version.h"

namespace uwaga::python {

std::string source_dir() { return UWAGA_SOURCE_DIR; }

std::string type_name(const py::handle& obj) {
  return py::str(py::type::of(obj).attr("__name__"));
}

}  // namespace uwaga::python

PYBIND11_MODULE(_uwaga, m) {
  namespace py = pybind11;
  using namespace uwaga::python;
  m.doc() = "uwaga: attention and transformers from scratch in C++ (Python bindings)";
  // Errors are sentences naming the op and the shapes (core/error.h); Python sees uwaga.Error.
  py::register_exception<uwaga::Error>(m, "Error", PyExc_RuntimeError);
  m.attr("source_dir") = source_dir();
  m.def("version_string", &uwaga::version_string,
        "'0.1.0 (git 1a2b3c4d5e6f)': as `uwaga-* --version` prints it and checkpoints keep it.");

  m.def("set_num_threads", &uwaga::set_num_threads, py::arg("n"),
        "One thread count for uwaga's OpenMP loops and OpenBLAS.");
  m.def("num_threads", &uwaga::num_threads);
  m.def("init_threads", &uwaga::init_threads,
        "Threads from UWAGA_NUM_THREADS, else all cores.");

  bind_tensor(m);
  bind_autograd(m);
  py::module_ nn = m.def_submodule("nn", "Modules: Linear, LayerNorm, the attention layers, ViT");
  bind_nn(nn);
  py::module_ optim = m.def_submodule("optim", "Optimizers, schedules, the trainer, checkpoints");
  bind_optim(optim);
  py::module_ data = m.def_submodule("data", "Image datasets, the data loader, the toy corpus");
  bind_data(data);
  py::module_ apps = m.def_submodule("apps", "The apps' presets, training and inspection");
  bind_apps(apps);
}
