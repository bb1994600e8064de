#pragma once
// Where the backward pass spends its time: a BackwardObserver (core/autograd.h) that adds the wall
// time of every backward rule to its op's total, and the time the engine spends passing gradients
// on to "engine". apps/bench uses it to show which backward rules scale with threads and which
// do not.
//   BackwardTimer timer;            // times every backward pass, on every thread, while it lives
//   loss.backward();
//   for (auto& [op, seconds] : timer.times()) ...
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/autograd.h"

namespace uwaga {

class BackwardTimer : public BackwardObserver {
 public:
  BackwardTimer();   // installs itself as the engine's observer
  ~BackwardTimer();  // puts back the observer it replaced
  BackwardTimer(const BackwardTimer&) = delete;
  BackwardTimer& operator=(const BackwardTimer&) = delete;

  // (op, seconds) summed over every thread so far, largest first.
  std::vector<std::pair<std::string, double>> times() const;

  void rule_started(const Node& node) override;
  void rule_returned(const Node& node) override;
  void gradients_passed_on(const Node& node) override;

 private:
  void add(const char* op, double seconds);

  BackwardObserver* previous_;
  mutable std::mutex mutex_;  // replicas run backward passes on several threads at once
  std::map<std::string, double> seconds_;
};

}  // namespace uwaga
