#include "core/graph.h"

#include <atomic>
#include <memory>
#include <utility>

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

}  // namespace

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

}  // namespace uwaga
