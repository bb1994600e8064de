#pragma once
// Where a training step spends its time, op by op, forward and backward: an observer of both the
// graph's recording (core/graph.h) and the engine (core/autograd.h). apps/bench's
// `uwaga-bench --op-times` prints its table.
//   OpTimer timer;                  // times every pass, on every thread, while it lives
//   forward_begins(); Tensor loss = …; loss.backward();
//   for (const OpTimes& t : timer.table()) …
//
// Forward: an op records its node when its output is ready, so an op's forward time is the time
// since the previous event on the same thread — the previous op's record, or forward_begins(),
// which whoever runs a forward pass calls first (optim::DataParallel, once per micro-batch).
// Work a node does not record (reading the input images, a loss's bookkeeping under NoGradGuard)
// is counted with the next op that records. Backward: the wall time of each rule; "engine" is
// the time spent passing the rules' gradients on to the inputs.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/graph.h"

namespace uwaga {

struct OpTimes {
  std::string op;
  double forward_s = 0, backward_s = 0;  // summed over every thread
  std::int64_t calls = 0;                // forward calls (nodes recorded)
  // What the op's calls did: multiply-adds ×2 for the products (linear, matmul, attention_heads:
  // their backward does twice the forward's), else the bytes of the inputs and outputs read and
  // written once — enough to tell a compute-bound op from a memory-bound one.
  double forward_flops = 0, forward_bytes = 0;
};

class OpTimer : public BackwardObserver, public RecordObserver {
 public:
  OpTimer();   // installs itself as the engine's and the graph's observer
  ~OpTimer();  // puts back the observers it replaced
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

  // One row per op, largest forward + backward time first.
  std::vector<OpTimes> table() const;

  void forward_began() override;
  void recorded(const Node& node) override;
  void rule_started(const Node& node) override;
  void rule_returned(const Node& node) override;
  void gradients_passed_on(const Node& node) override;

 private:
  OpTimes& row(const char* op);  // call with mutex_ held

  BackwardObserver* previous_backward_;
  RecordObserver* previous_record_;
  mutable std::mutex mutex_;  // replicas record and run backward passes on several threads at once
  std::map<std::string, OpTimes> rows_;
};

// The floating-point operations of one forward call of `node`'s op (0 where it is not a product).
double forward_flops(const Node& node);

}  // namespace uwaga
