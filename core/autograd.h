#pragma once
// Reverse-mode automatic differentiation: the engine behind Tensor::backward(). The graph it
// walks is recorded by the ops as they run (core/graph.h).
//
// backward() sorts the nodes reachable from the loss topologically (depth first), walks them in
// reverse, and for each input adds the returned gradient into:
//   - the running gradient of the node that produced the input, or
//   - .grad() of a leaf (a tensor made with requires_grad_(), e.g. a parameter).
// Broadcasting is undone in exactly one place, here: a gradient whose shape differs from its
// input's (because the op broadcast the input) is summed back to the input's shape (reduce_to).
#include <vector>

#include "core/graph.h"
#include "core/tensor.h"

namespace uwaga {

// Every node reachable from `root`, in topological order (inputs before the nodes using them).
std::vector<Node*> topological_order(const Tensor& root);

// The engine behind Tensor::backward().
void run_backward(const Tensor& root, const Tensor& grad_output, bool retain_graph);

// One node's backward rule alone, as the engine would run it (for teaching and tests): checks
// that dL/dout has the output's shape and dtype, that the graph is not freed and that no input
// was changed in place, then returns {dL/dinput_i} (undefined for inputs without a gradient).
std::vector<Tensor> apply_backward_rule(const Node& node, const Tensor& grad_output);

// Sums `grad` over the dims that broadcasting expanded, so it gets `shape` (the input's shape).
Tensor reduce_to(const Tensor& grad, const Shape& shape);

// ---- a hook for profilers -------------------------------------------------------------------
// An observer is told, on the thread running the backward pass, when each node's backward rule
// starts and returns and when the engine has passed the rule's gradients on to the inputs (the
// engine's own work). core/op_timer.h is one. Unset (the default), the engine only tests
// a pointer per node.
class BackwardObserver {
 public:
  virtual ~BackwardObserver() = default;
  virtual void rule_started(const Node& node) = 0;
  virtual void rule_returned(const Node& node) = 0;
  virtual void gradients_passed_on(const Node& node) = 0;
};

// Installs `observer` for every thread's backward passes (nullptr: none) and returns the one it
// replaces. Call it while no backward pass runs.
BackwardObserver* set_backward_observer(BackwardObserver* observer);

}  // namespace uwaga
