#pragma once
// Reverse-mode automatic differentiation, define-by-run (as in micrograd).
//
// Every op that sees an input requiring a gradient records a Node on its result: the op's name,
// its inputs (the parents in the graph) and a backward rule. A backward rule receives dL/d(output)
// and returns dL/d(input) for each input, in order (an undefined Tensor where an input needs none).
//
// backward() sorts the nodes reachable from the loss topologically (depth first), walks them in
// reverse, and for each input adds the returned gradient into:
//   - the running gradient of the node that produced the input, or
//   - .grad() of a leaf (a tensor made with requires_grad_(), e.g. a parameter).
// Broadcasting is undone in exactly one place, here: a gradient whose shape differs from its
// input's (because the op broadcast the input) is summed back to the input's shape (reduce_to).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace uwaga {

using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output)>;

struct Node {
  const char* op = "";         // the op's name, e.g. "matmul"
  std::vector<Tensor> inputs;  // parents; kept alive until the graph is freed
  BackwardFn backward;         // dL/dout -> {dL/dinput_i}
  // What the backward rule reads besides the inputs (the op's own output, for exp or softmax),
  // and the storage versions of the inputs, then of these, when the op ran.
  std::vector<Tensor> saved;
  std::vector<std::uint64_t> versions;
  Shape out_shape;                  // the op's output: what dL/dout must look like
  DType out_dtype = DType::Float32;
  bool freed = false;          // set once backward() has used and released this node
  std::size_t id = 0;          // creation order on its thread, unique: for stable graph drawings
};

// ---- gradient mode ----------------------------------------------------------------------------
bool grad_enabled();
void set_grad_enabled(bool on);

// Inside a NoGradGuard no graph is recorded (evaluation, optimizer updates, backward rules).
class NoGradGuard {
 public:
  NoGradGuard() : previous_(grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// True when grad mode is on and some input requires a gradient.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
bool needs_grad(const std::vector<Tensor>& inputs);

// Attaches a node to `out` when any input requires a gradient; returns `out`. Ops call this last:
//   return record(out, "mul", {a, b}, [a, b](const Tensor& g) { return {g * b, g * a}; });
// `saved` lists the tensors other than the inputs that the backward rule reads, when a user can
// reach them: an op's own output (exp, softmax: pass out.detach()), a view of it. Changing an
// input or a saved tensor in place after the op ran would make its gradient silently wrong, so
// backward() checks their storage versions first and fails naming the op.
Tensor record(Tensor out, const char* op, std::vector<Tensor> inputs, BackwardFn backward,
              std::vector<Tensor> saved = {});

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
