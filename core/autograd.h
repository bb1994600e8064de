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
#include <string>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "core/tensor.h"

namespace uwaga {

// ---- timing the backward pass (for profiling) ----------------------------------------------
// While on, the engine adds the wall time of every backward rule to its op's total, and the time
// spent accumulating gradients to "engine". Off by default; apps/bench uses it to show which
// backward rules scale with threads and which do not.
void set_backward_timing(bool on);
// (op, seconds) since the last reset, largest first.
std::vector<std::pair<std::string, double>> backward_times();
void reset_backward_times();

// Sums `grad` over the dims that broadcasting expanded, so it gets `shape` (the input's shape).
Tensor reduce_to(const Tensor& grad, const Shape& shape);

// The engine behind Tensor::backward().
void run_backward(const Tensor& root, const Tensor& grad_output, bool retain_graph);

// One node's backward rule alone, as the engine would run it (for teaching and tests): checks
// that dL/dout has the output's shape and dtype, that the graph is not freed and that no input
// was changed in place, then returns {dL/dinput_i} (undefined for inputs without a gradient).
std::vector<Tensor> apply_backward_rule(const Node& node, const Tensor& grad_output);

// Every node reachable from `root`, in topological order (inputs before the nodes using them).
std::vector<Node*> topological_order(const Tensor& root);

}  // namespace uwaga
