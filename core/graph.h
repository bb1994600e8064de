#pragma once
// The autograd graph, recorded as ops run (define-by-run, as in micrograd).
//
// Every op that sees an input requiring a gradient records a Node on its result: the op's name,
// its inputs (the parents in the graph) and a backward rule. A backward rule receives dL/d(output)
// and returns dL/d(input) for each input, in order (an undefined Tensor where an input needs none).
// The engine that walks this graph backwards is core/autograd.h.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <vector>

#include "core/tensor.h"

namespace uwaga {

using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output)>;
// Adds dL/dinput_0 into `acc` (see Node::accumulate_into_input0).
using AccumulateFn = std::function<void(const Tensor& grad_output, Tensor& acc)>;

struct Node {
  const char* op = "";         // the op's name, e.g. "matmul"
  std::vector<Tensor> inputs;  // parents; kept alive until the graph is freed
  BackwardFn backward;         // dL/dout -> {dL/dinput_i}
  // Optional, for a gradient that is sparse in a large input (an embedding table: only the rows
  // of the batch's tokens): adds dL/dinput_0 straight into `acc`, the gradient input 0 already
  // holds, where `backward` would make a dense tensor, mostly zeros, for the engine to add (GPT-2's
  // tied table: 154 MB made, zeroed and added every step). The engine calls it in backward's place
  // when input 0 is a leaf that already has a gradient and no other input needs one;
  // `backward` stays the rule (apply_backward_rule, gradcheck) and both must agree (a test).
  AccumulateFn accumulate_into_input0;
  // What the backward rule reads besides the inputs (the op's own output, for exp or softmax),
  // and the storage versions of the inputs, then of these, when the op ran.
  std::vector<Tensor> saved;
  std::vector<std::uint64_t> versions;
  Shape out_shape;                  // the op's output: what dL/dout must look like
  DType out_dtype = DType::Float32;
  bool freed = false;          // set once backward() has used and released this node
  std::size_t id = 0;          // creation order on its thread, unique: for stable graph drawings

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Frees the nodes only this one keeps alive one after another, not by recursion: a chain of a
  // million ops would otherwise overflow the stack when its last tensor goes.
  ~Node();
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
// record() with Node::accumulate_into_input0 as well.
Tensor record_accumulating(Tensor out, const char* op, std::vector<Tensor> inputs,
                           BackwardFn backward, AccumulateFn accumulate_into_input0);

// True while backward() runs a rule of a graph it frees as it goes (retain_graph false), on this
// thread: nothing will read what the rule saved again, so the rule may write its gradient into a
// saved buffer of its own instead of a new one (cross_entropy's softmax, B·T·V for a language
// model's head).
bool rule_runs_once();

// ---- a hook for profilers -------------------------------------------------------------------
// A record observer is told, on the thread recording the graph, when a forward pass begins and
// each time an op records its node (core/op_timer.h times the ops this way). Unset (the
// default), record() and forward_begins() only test a pointer.
class RecordObserver {
 public:
  virtual ~RecordObserver() = default;
  virtual void forward_began() = 0;
  virtual void recorded(const Node& node) = 0;
};

// Installs `observer` for every thread (nullptr: none) and returns the one it replaces. Call it
// while no graph is being recorded.
RecordObserver* set_record_observer(RecordObserver* observer);

// Whoever runs a forward pass (optim::DataParallel, for each micro-batch) calls this first.
void forward_begins();

}  // namespace uwaga
