#include "core/graph.h"

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

namespace uwaga {
namespace {

thread_local bool g_grad_enabled = true;
RecordObserver* g_record_observer = nullptr;  // set by a profiler, never while recording
// Node ids: creation order within a thread, unique across threads (the thread's serial number
// in the high bits). A per-thread counter, because one counter shared by threads that build
// graphs at once (optim::DataParallel's replicas) would bounce its cache line between the cores
// on every op.
std::atomic<std::size_t> g_next_thread_serial{0};
std::size_t next_node_id() {
  thread_local std::size_t serial = g_next_thread_serial++;
  thread_local std::size_t count = 0;
  return (serial << 40) | count++;
}


// Moves into `doomed` the graph nodes of the tensors in `ts` that die with them (a tensor whose
// handle here is the last one, its node held by no one else), so their destructors find nothing
// left to free recursively.
void take_dying_parents(std::vector<Tensor>& ts, std::vector<std::shared_ptr<Node>>& doomed) {
  for (Tensor& t : ts) {
    if (!t.defined() || t.impl_ptr().use_count() != 1) continue;
    std::shared_ptr<Node>& parent = t.impl().grad_fn;
    if (parent && parent.use_count() == 1) doomed.push_back(std::move(parent));
  }
  ts.clear();
}

// Releases what `node` holds, its backward rule first: the rule's captured tensors are usually
// copies of the inputs, and only once they are gone is the node's handle on an input the last one.
void release(Node& node, std::vector<std::shared_ptr<Node>>& doomed) {
  node.backward = nullptr;
  take_dying_parents(node.inputs, doomed);
  take_dying_parents(node.saved, doomed);
}

}  // namespace

Node::~Node() {
  std::vector<std::shared_ptr<Node>> doomed;
  release(*this, doomed);
  while (!doomed.empty()) {
    std::shared_ptr<Node> next = std::move(doomed.back());
    doomed.pop_back();
    release(*next, doomed);
  }  // `next` dies here with nothing left under it
}

RecordObserver* set_record_observer(RecordObserver* observer) {
  return std::exchange(g_record_observer, observer);
}

void forward_begins() {
  if (g_record_observer) g_record_observer->forward_began();
}

bool grad_enabled() { return g_grad_enabled; }
void set_grad_enabled(bool on) { g_grad_enabled = on; }

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!g_grad_enabled) return false;
  for (const Tensor* t : inputs)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!g_grad_enabled) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

Tensor record(Tensor out, const char* op, std::vector<Tensor> inputs, BackwardFn backward,
              std::vector<Tensor> saved) {
  if (!needs_grad(inputs)) return out;
  auto node = std::make_shared<Node>();
  node->op = op;
  node->inputs = std::move(inputs);
  node->backward = std::move(backward);
  node->saved = std::move(saved);
  node->versions.reserve(node->inputs.size() + node->saved.size());
  for (const Tensor& t : node->inputs) node->versions.push_back(t.defined() ? t.version() : 0);
  for (const Tensor& t : node->saved) node->versions.push_back(t.defined() ? t.version() : 0);
  node->out_shape = out.shape();
  node->out_dtype = out.dtype();
  node->id = next_node_id();
  if (g_record_observer) g_record_observer->recorded(*node);
  out.impl().requires_grad = true;
  out.impl().grad_fn = std::move(node);
  return out;
}

Tensor record_accumulating(Tensor out, const char* op, std::vector<Tensor> inputs,
                           BackwardFn backward, AccumulateFn accumulate_into_input0) {
  out = record(std::move(out), op, std::move(inputs), std::move(backward));
  if (out.grad_fn()) out.grad_fn()->accumulate_into_input0 = std::move(accumulate_into_input0);
  return out;
}

}  // namespace uwaga
