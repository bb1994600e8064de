#include "core/op_timer.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/shape.h"

namespace uwaga {
namespace {

using Clock = std::chrono::steady_clock;
// The last event on this thread: a forward pass began, an op recorded its node, a backward rule
// started or returned.
thread_local Clock::time_point t_last;

double seconds_since_last() {
  const Clock::time_point now = Clock::now();
  const double s = std::chrono::duration<double>(now - t_last).count();
  t_last = now;
  return s;
}

double bytes(const Tensor& t) {
  return t.defined() ? static_cast<double>(t.numel()) * static_cast<double>(dtype_size(t.dtype()))
                     : 0.0;
}

}  // namespace

double forward_flops(const Node& node) {
  const std::int64_t out = numel(node.out_shape);
  if (node.inputs.empty() || !node.inputs[0].defined() || node.inputs[0].dim() == 0) return 0;
  const double k = static_cast<double>(node.inputs[0].shape().back());
  // linear: y = x Wᵀ + b, K = in;  matmul: C = A B, K = A's last dim.
  if (std::strcmp(node.op, "linear") == 0 || std::strcmp(node.op, "matmul") == 0)
    return 2.0 * static_cast<double>(out) * k;
  // attention_heads: E = Q Kᵀ and Y = A V over S keys, each 2·(B·T·D)·S.
  if (std::strcmp(node.op, "attention_heads") == 0 && node.inputs.back().dim() >= 2)
    return 4.0 * static_cast<double>(out) * static_cast<double>(node.inputs.back().size(1));
  return 0;
}

OpTimer::OpTimer()
    : previous_backward_(set_backward_observer(this)), previous_record_(set_record_observer(this)) {}

OpTimer::~OpTimer() {
  set_backward_observer(previous_backward_);
  set_record_observer(previous_record_);
}

void OpTimer::forward_began() { t_last = Clock::now(); }

void OpTimer::recorded(const Node& node) {
  const double s = seconds_since_last();
  double moved = 0;
  for (const Tensor& t : node.inputs) moved += bytes(t);
  moved += static_cast<double>(numel(node.out_shape)) * static_cast<double>(dtype_size(node.out_dtype));
  const double flops = forward_flops(node);
  std::lock_guard<std::mutex> lock(mutex_);
  OpTimes& r = row(node.op);
  r.forward_s += s;
  r.calls += 1;
  r.forward_flops += flops;
  r.forward_bytes += moved;
}

void OpTimer::rule_started(const Node&) { t_last = Clock::now(); }

void OpTimer::rule_returned(const Node& node) {
  const double s = seconds_since_last();
  std::lock_guard<std::mutex> lock(mutex_);
  row(node.op).backward_s += s;
}

void OpTimer::gradients_passed_on(const Node&) {
  const double s = seconds_since_last();
  std::lock_guard<std::mutex> lock(mutex_);
  row("engine").backward_s += s;
}

OpTimes& OpTimer::row(const char* op) {
  OpTimes& r = rows_[op];
  r.op = op;
  return r;
}

std::vector<OpTimes> OpTimer::table() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<OpTimes> out;
  for (const auto& [op, r] : rows_) out.push_back(r);
  std::sort(out.begin(), out.end(), [](const OpTimes& a, const OpTimes& b) {
    return a.forward_s + a.backward_s > b.forward_s + b.backward_s;
  });
  return out;
}

}  // namespace uwaga
