#include "core/backward_timer.h"

#include <algorithm>
#include <chrono>

namespace uwaga {
namespace {

using Clock = std::chrono::steady_clock;
// When the running rule, or the engine's work after it, started on this thread.
thread_local Clock::time_point t_started;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

BackwardTimer::BackwardTimer() : previous_(set_backward_observer(this)) {}

BackwardTimer::~BackwardTimer() { set_backward_observer(previous_); }

void BackwardTimer::rule_started(const Node&) { t_started = Clock::now(); }

void BackwardTimer::rule_returned(const Node& node) {
  add(node.op, seconds_since(t_started));
  t_started = Clock::now();
}

void BackwardTimer::gradients_passed_on(const Node&) { add("engine", seconds_since(t_started)); }

void BackwardTimer::add(const char* op, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  seconds_[op] += seconds;
}

std::vector<std::pair<std::string, double>> BackwardTimer::times() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::string, double>> out(seconds_.begin(), seconds_.end());
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace uwaga
