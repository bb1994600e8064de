// Autograd from Python: requires_grad, backward, .grad, no_grad, the graph's nodes (op name,
// parents, backward rule), gradcheck and the DOT drawing.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/autograd.h"
#include "core/gradcheck.h"
#include "core/graph_dot.h"
#include "notebooks/bindings/bindings.h"

namespace uwaga::python {
namespace {

// `with uwaga.no_grad():` — a NoGradGuard for the duration of the block. One object may be
// entered again inside its own block (`ng = uwaga.no_grad()`, then `with ng: ... with ng:`), so
// it keeps a stack: each exit restores what its own enter found.
class NoGradContext {
 public:
  void enter() { guards_.push_back(std::make_unique<NoGradGuard>()); }
  void exit(const py::args&) {
    if (!guards_.empty()) guards_.pop_back();
  }

 private:
  std::vector<std::unique_ptr<NoGradGuard>> guards_;
};

py::object grad_or_none(const Tensor& t) {
  Tensor g = t.grad();
  return g.defined() ? py::cast(g) : py::none();
}

// The nodes of topological_order as the shared pointers the tensors hold (topological_order
// returns raw pointers, which Python must not own).
std::vector<std::shared_ptr<Node>> graph_nodes(const Tensor& root) {
  std::unordered_map<const Node*, std::shared_ptr<Node>> owner;
  if (root.grad_fn()) owner[root.grad_fn().get()] = root.grad_fn();
  const std::vector<Node*> order = topological_order(root);
  for (const Node* node : order)
    for (const Tensor& in : node->inputs)
      if (in.defined() && in.grad_fn()) owner[in.grad_fn().get()] = in.grad_fn();
  std::vector<std::shared_ptr<Node>> out;
  for (const Node* node : order) out.push_back(owner.at(node));
  return out;
}

// A node's op name is a `const char*` that must outlive the graph: the names Python ops use are
// kept here, one copy each.
const char* interned(const std::string& name) {
  static std::mutex mutex;
  static std::unordered_set<std::string> names;
  std::lock_guard<std::mutex> lock(mutex);
  return names.insert(name).first->c_str();
}

// uwaga.Function.apply's link to the engine: attaches a node named `op` to `out` whose backward
// rule calls the Python function `backward(grad_output)` and expects one gradient (a Tensor or
// None) per input. Without an input that requires a gradient, out is returned as it is.
Tensor record_python_op(const Tensor& out, const std::string& op, const std::vector<Tensor>& inputs,
                        const py::function& backward, const std::vector<Tensor>& saved) {
  if (out.grad_fn()) fail(op, ": forward must compute its output without recording a graph");
  const std::size_t n = inputs.size();
  // The node may be freed wherever the graph is; a Python object is released holding the GIL.
  const std::shared_ptr<py::function> rule(new py::function(backward), [](py::function* f) {
    py::gil_scoped_acquire gil;
    delete f;
  });
  BackwardFn fn = [rule, n, op](const Tensor& grad_output) {
    py::gil_scoped_acquire gil;
    py::object result = (*rule)(grad_output);
    std::vector<Tensor> grads;
    if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
      for (const py::handle item : result)
        grads.push_back(item.is_none() ? Tensor() : item.cast<Tensor>());
    } else {
      grads.push_back(result.is_none() ? Tensor() : result.cast<Tensor>());
    }
    if (grads.size() != n)
      fail(op, ".backward returned ", grads.size(), " gradients for ", n, " inputs");
    return grads;
  };
  return record(out, interned(op), inputs, std::move(fn), saved);
}

}  // namespace

void bind_autograd(py::module_& m) {
  auto T = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  T.def_property("requires_grad", &Tensor::requires_grad,
                 [](Tensor& t, bool on) { t.requires_grad_(on); })
      .def("requires_grad_", [](Tensor& t, bool on) { return t.requires_grad_(on); },
           py::arg("on") = true)
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def_property("grad", &grad_or_none,
                    [](Tensor& t, const std::optional<Tensor>& g) {
                      if (g) t.set_grad(*g);
                      else t.zero_grad();
                    },
                    "dL/dt after backward() (leaves only), else None.")
      .def("zero_grad", &Tensor::zero_grad)
      .def_property_readonly("grad_fn",
                             [](const Tensor& t) -> py::object {
                               if (!t.grad_fn()) return py::none();
                               return py::cast(t.grad_fn());
                             },
                             "The node (op) that produced this tensor; None on leaves.")
      .def("backward",
           [](const Tensor& t, const std::optional<Tensor>& grad, bool retain_graph) {
             if (grad) t.backward(*grad, retain_graph);
             else t.backward(retain_graph);
           },
           py::arg("grad") = py::none(), py::arg("retain_graph") = false,
           "Reverse-mode differentiation from this tensor (a loss, or with dL/dt given).")
      .def("detach", &Tensor::detach);

  py::class_<Node, std::shared_ptr<Node>>(m, "Node",
                                          "One op in the graph: its name, its inputs (parents) "
                                          "and its backward rule.")
      .def_property_readonly("op", [](const Node& n) { return std::string(n.op); })
      .def_property_readonly("inputs",
                             [](const Node& n) {
                               // An input an op may go without (a bias) is None, not undefined.
                               py::list out;
                               for (const Tensor& in : n.inputs)
                                 out.append(in.defined() ? py::cast(in) : py::none());
                               return out;
                             })
      .def_readonly("id", &Node::id)
      .def_readonly("freed", &Node::freed)
      .def("backward",
           [](const Node& n, const Tensor& grad_output) {
             // Checked as the engine checks: dL/dout's shape and dtype, a freed graph, inputs
             // changed in place.
             std::vector<py::object> out;
             for (const Tensor& g : apply_backward_rule(n, grad_output))
               out.push_back(g.defined() ? py::cast(g) : py::none());
             return out;
           },
           py::arg("grad_output"),
           "The backward rule alone: dL/d(output) -> [dL/d(input) for each input].")
      .def("__repr__", [](const Node& n) {
        return "<Node " + std::string(n.op) + " #" + std::to_string(n.id) + ", " +
               std::to_string(n.inputs.size()) + " inputs>";
      });

  m.def("_record", &record_python_op, py::arg("out"), py::arg("op"), py::arg("inputs"),
        py::arg("backward"), py::arg("saved") = std::vector<Tensor>{},
        "The engine side of uwaga.Function: out with a node whose backward rule is a Python "
        "function.");
  m.def("topological_order", &graph_nodes, py::arg("root"),
        "Every node reachable from root, inputs before the nodes that use them.");
  m.def("grad_enabled", &grad_enabled);
  m.def("set_grad_enabled", &set_grad_enabled, py::arg("on"));
  py::class_<NoGradContext>(m, "no_grad", "with uwaga.no_grad(): no graph is recorded inside.")
      .def(py::init<>())
      .def("__enter__", &NoGradContext::enter)
      .def("__exit__", &NoGradContext::exit);

  py::class_<GradcheckResult>(m, "GradcheckResult")
      .def_readonly("ok", &GradcheckResult::ok)
      .def_readonly("message", &GradcheckResult::message)
      .def_readonly("max_abs_error", &GradcheckResult::max_abs_error)
      .def_readonly("checked", &GradcheckResult::checked)
      .def("__bool__", [](const GradcheckResult& r) { return r.ok; })
      .def("__repr__", [](const GradcheckResult& r) {
        std::ostringstream s;
        s << "GradcheckResult(ok=" << (r.ok ? "True" : "False") << ", checked=" << r.checked
          << ", max_abs_error=" << r.max_abs_error
          << (r.message.empty() ? "" : ", message='" + r.message + "'") << ")";
        return s.str();
      });
  m.def("gradcheck",
        [](const py::function& f, const std::vector<Tensor>& inputs, double eps, double atol,
           double rtol, std::uint64_t seed, bool allow_all_zero) {
          GradcheckFn fn = [&f](const std::vector<Tensor>& xs) {
            return f(*py::tuple(py::cast(xs))).cast<Tensor>();
          };
          return gradcheck(fn, inputs, {eps, atol, rtol, seed, allow_all_zero});
        },
        py::arg("f"), py::arg("inputs"), py::arg("eps") = 1e-6, py::arg("atol") = 1e-5,
        py::arg("rtol") = 1e-3, py::arg("seed") = 0, py::arg("allow_all_zero") = false,
        "Compares autograd's gradients of f(*inputs) with central finite differences. The "
        "inputs must be float64; those with requires_grad are checked.");
  m.def("to_dot", &to_dot, py::arg("root"), py::arg("max_values") = 6,
        "The graph behind root as Graphviz DOT (render with `dot -Tsvg`).");
}

}  // namespace uwaga::python
