#include "core/autograd.h"

#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/elementwise.h"
#include "core/reduction.h"
#include "core/shape_ops.h"

namespace uwaga {
namespace {

BackwardObserver* g_observer = nullptr;  // set by a profiler, never during a backward pass

}  // namespace

BackwardObserver* set_backward_observer(BackwardObserver* observer) {
  return std::exchange(g_observer, observer);
}

namespace {

// The dims of a gradient of shape `grad` to sum so that it has shape `shape` (those an op's
// broadcasting added or stretched from 1), or nothing when `shape` does not broadcast to it.
std::optional<Dims> broadcast_dims(const Shape& grad, const Shape& shape) {
  const std::int64_t rank = static_cast<std::int64_t>(grad.size());
  const std::int64_t extra = rank - static_cast<std::int64_t>(shape.size());
  if (extra < 0) return std::nullopt;
  Dims dims;
  for (std::int64_t d = 0; d < rank; ++d) {
    if (d < extra) {
      dims.push_back(d);
    } else if (shape[d - extra] != grad[d]) {
      if (shape[d - extra] != 1) return std::nullopt;
      dims.push_back(d);
    }
  }
  return dims;
}

}  // namespace

Tensor reduce_to(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  const std::optional<Dims> dims = broadcast_dims(grad.shape(), shape);
  if (!dims)
    fail("backward: a gradient of shape ", shape_str(grad.shape()),
         " cannot be summed back to its input's shape ", shape_str(shape));
  return reshape(sum(grad, *dims, /*keepdim=*/true), shape);
}

std::vector<Node*> topological_order(const Tensor& root) {
  std::vector<Node*> order;
  if (!root.defined() || !root.grad_fn()) return order;
  // Iterative depth-first search; a node is emitted after all of its inputs' nodes.
  std::unordered_set<Node*> visited;
  std::vector<std::pair<Node*, std::size_t>> stack;  // (node, next input to visit)
  stack.emplace_back(root.grad_fn().get(), 0);
  visited.insert(root.grad_fn().get());
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      const Tensor& input = node->inputs[next++];
      Node* parent = input.defined() ? input.grad_fn().get() : nullptr;
      if (parent && visited.insert(parent).second) stack.emplace_back(parent, 0);
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

namespace {

// dL/droot: the caller's gradient, or 1 for a single-element output (a loss).
Tensor seed_gradient(const Tensor& root, const Tensor& grad_output) {
  check_defined(root, "backward");
  if (!root.requires_grad())
    fail("backward: the tensor of shape ", shape_str(root.shape()),
         " does not require grad (no input it depends on has requires_grad_())");
  if (!grad_output.defined()) {
    if (root.numel() != 1)
      fail("backward: the output has shape ", shape_str(root.shape()),
           "; backward() without a gradient needs a single-element output (a loss) — pass a "
           "gradient of that shape instead");
    return Tensor::ones(root.shape(), root.dtype());
  }
  if (grad_output.shape() != root.shape() || grad_output.dtype() != root.dtype())
    fail("backward: gradient of shape ", shape_str(grad_output.shape()), " and dtype ",
         dtype_name(grad_output.dtype()), " does not match the output's shape ",
         shape_str(root.shape()), " and dtype ", dtype_name(root.dtype()));
  return grad_output;
}

// The values a backward rule may read must be those the op computed with. Every input is checked,
// not only those a rule reads (PyTorch checks just those): one rule to remember.
void check_versions(const Node* node) {
  const std::size_t n = node->inputs.size();
  for (std::size_t i = 0; i < node->versions.size(); ++i) {
    const Tensor& t = i < n ? node->inputs[i] : node->saved[i - n];
    if (!t.defined() || t.version() == node->versions[i]) continue;
    fail("backward: ", i < n ? "input " : "saved output ", i < n ? i : i - n, " ",
         shape_str(t.shape()), " of '", node->op, "' was changed in place after '", node->op,
         "' used it (version ", node->versions[i], " then, ", t.version(),
         " now); the gradient would be computed from the new values. Change a clone() instead, "
         "or change it after backward()");
  }
}

[[noreturn]] void fail_freed(const Node* node) {
  fail("backward: the graph through '", node->op,
       "' was already freed by an earlier backward(); pass retain_graph = true to the first "
       "backward() to go through the graph twice");
}

// Freeing a node drops its inputs, which may hold the last reference to an earlier node; the
// engine keeps every node of a pass alive until the pass ends.
std::vector<std::shared_ptr<Node>> hold_nodes(const Tensor& root, const std::vector<Node*>& order) {
  std::vector<std::shared_ptr<Node>> alive{root.grad_fn()};
  for (Node* node : order)
    for (const Tensor& input : node->inputs)
      if (input.defined() && input.grad_fn()) alive.push_back(input.grad_fn());
  return alive;
}

// Whether g is held by its one handle only, its storage by nothing else (a backward rule's fresh
// result, usually): then it may be taken over, or written in place.
bool sole_owner(const Tensor& g) {
  return g.impl_ptr().use_count() == 1 && g.impl().storage.use_count() == 1 && !g.impl().grad_fn &&
         !g.impl().grad;
}

// Leaves own their gradient buffer. The first gradient becomes it: taken over when nothing else
// holds the tensor or its storage (the usual case, a backward rule's fresh result), copied
// otherwise. Later ones are added in place (so a tensor used twice gets the sum of both uses).
void accumulate_leaf(const Tensor& leaf, Tensor g) {
  TensorImpl& impl = leaf.impl();
  if (!impl.grad) {
    if (sole_owner(g)) {
      impl.grad = g.impl_ptr();
      return;
    }
    Tensor copy = Tensor::empty(g.shape(), g.dtype());
    copy.copy_from(g);
    impl.grad = copy.impl_ptr();
  } else {
    Tensor acc(impl.grad);
    add_inplace(acc, g);
  }
}

// The node's backward rule: dL/dout -> {dL/dinput_i}.
std::vector<Tensor> call_rule(const Node& node, const Tensor& dout) {
  check_versions(&node);
  if (g_observer) g_observer->rule_started(node);
  std::vector<Tensor> dinputs = node.backward(dout);
  if (g_observer) g_observer->rule_returned(node);
  if (dinputs.size() != node.inputs.size())
    fail("backward: op '", node.op, "' returned ", dinputs.size(), " gradients for ",
         node.inputs.size(), " inputs");
  return dinputs;
}

// Adds each dL/dinput_i to the running gradient of the node that made input i, or to .grad() of
// a leaf, after summing it back to the input's shape where the op broadcast the input.
void pass_on(const Node& node, std::vector<Tensor> dinputs,
             std::unordered_map<Node*, Tensor>& grads) {
  for (std::size_t i = 0; i < dinputs.size(); ++i) {
    const Tensor& input = node.inputs[i];
    if (!input.defined() || !input.requires_grad() || !dinputs[i].defined()) continue;
    Tensor di = std::move(dinputs[i]);  // so a fresh gradient has one holder: di
    if (di.shape() != input.shape()) {  // undo broadcasting
      // A rule that returns a gradient of another shape is named with its input (a Python
      // uwaga.Function's backward, most likely), rather than left to reduce_to's general message.
      if (!broadcast_dims(di.shape(), input.shape()))
        fail("backward: op '", node.op, "' returned a gradient of shape ", shape_str(di.shape()),
             " for its input ", i, " of shape ", shape_str(input.shape()),
             "; a gradient has its input's shape (or one its input broadcasts to)");
      di = reduce_to(di, input.shape());
    }
    if (input.grad_fn()) {
      auto [slot, fresh] = grads.try_emplace(input.grad_fn().get(), std::move(di));
      // A second gradient for the same tensor (a residual stream feeds two branches): summed,
      // in place when the running sum is nobody else's (add's rule hands one g to both inputs).
      if (!fresh) {
        if (sole_owner(slot->second)) add_inplace(slot->second, di);
        else slot->second = add(slot->second, di);
      }
    } else {
      accumulate_leaf(input, std::move(di));
    }
  }
  if (g_observer) g_observer->gradients_passed_on(node);
}

// The node's gradient for input 0 added straight into that leaf's gradient by the node's
// accumulate_into_input0, where it has one, the leaf already holds a gradient and no other input
// needs one (a tied embedding table, after the output layer's gradient): true when it was.
bool accumulated_into_leaf(const Node& node, const Tensor& dout) {
  if (!node.accumulate_into_input0 || node.inputs.empty()) return false;
  const Tensor& leaf = node.inputs[0];
  if (!leaf.defined() || !leaf.requires_grad() || leaf.grad_fn() || !leaf.impl().grad) return false;
  for (std::size_t i = 1; i < node.inputs.size(); ++i)
    if (node.inputs[i].defined() && node.inputs[i].requires_grad()) return false;
  Tensor acc(leaf.impl().grad);
  if (acc.shape() != leaf.shape() || acc.dtype() != leaf.dtype()) return false;
  check_versions(&node);
  if (g_observer) g_observer->rule_started(node);
  acc.bump_version();
  node.accumulate_into_input0(dout, acc);
  if (g_observer) g_observer->rule_returned(node);
  if (g_observer) g_observer->gradients_passed_on(node);
  return true;
}

// Releases what the node held, so memory goes as the pass moves on; a second pass through it fails.
void free_node(Node& node) {
  node.inputs.clear();
  node.saved.clear();
  node.versions.clear();
  node.backward = nullptr;
  node.accumulate_into_input0 = nullptr;
  node.freed = true;
}

}  // namespace

std::vector<Tensor> apply_backward_rule(const Node& node, const Tensor& grad_output) {
  check_defined(grad_output, "apply_backward_rule");
  if (node.freed) fail_freed(&node);
  if (grad_output.shape() != node.out_shape || grad_output.dtype() != node.out_dtype)
    fail("apply_backward_rule: '", node.op, "' produced ", shape_str(node.out_shape), " ",
         dtype_name(node.out_dtype), ", so dL/dout must be that too, got ",
         shape_str(grad_output.shape()), " ", dtype_name(grad_output.dtype()));
  check_versions(&node);
  NoGradGuard no_grad;  // as the engine runs it
  return node.backward(grad_output);
}

namespace {
thread_local bool g_rule_runs_once = false;
}  // namespace

bool rule_runs_once() { return g_rule_runs_once; }

void run_backward(const Tensor& root, const Tensor& grad_output, bool retain_graph) {
  const Tensor g = seed_gradient(root, grad_output);  // dL/droot
  NoGradGuard no_grad;  // backward rules compute with ordinary ops, without recording them
  if (root.is_leaf()) {
    accumulate_leaf(root, g);
    return;
  }
  if (root.grad_fn()->freed) fail_freed(root.grad_fn().get());

  const std::vector<Node*> order = topological_order(root);
  const auto alive = hold_nodes(root, order);  // until the pass ends
  std::unordered_map<Node*, Tensor> grads;  // running dL/d(output of node)
  grads[root.grad_fn().get()] = g;
  // Each node after every node that uses it. (Reverse iterators rather than std::views::reverse,
  // which clang 14 cannot compile against GCC 12's library: tests/fuzz builds with clang.)
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* node = *it;
    if (node->freed) fail_freed(node);
    auto found = grads.find(node);
    if (found == grads.end()) continue;  // nothing flowed here (inputs needing no gradient)
    const Tensor dout = std::move(found->second);
    grads.erase(found);
    struct RunsOnce {  // rule_runs_once() for this rule, restored even when it throws
      bool before = g_rule_runs_once;
      explicit RunsOnce(bool once) { g_rule_runs_once = once; }
      ~RunsOnce() { g_rule_runs_once = before; }
    } runs_once(!retain_graph);
    if (!accumulated_into_leaf(*node, dout)) pass_on(*node, call_rule(*node, dout), grads);
    if (!retain_graph) free_node(*node);
  }
}

// Declared in core/tensor.h; defined here, with the engine they call.
void Tensor::backward(bool retain_graph) const { run_backward(*this, Tensor(), retain_graph); }

void Tensor::backward(const Tensor& grad_output, bool retain_graph) const {
  run_backward(*this, grad_output, retain_graph);
}

}  // namespace uwaga
