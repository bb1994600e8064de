#pragma once
// GradientReduction: the last stage of a step's gradient, where the pieces computed apart are
// added up.
//
// A step's gradient is computed in pieces (data_parallel.h): each replica of the model, one per
// thread, backpropagates its share of the batch, and the sum of the pieces is the whole batch's
// gradient. Inside a process the threads add their replicas' gradients into the model's. When
// several processes train one batch together (each its own share of the rows), their sums must
// be added up once more, across the processes: that is this interface's one job. Everything above
// it — the models, the data, the apps — is the same whether a step runs in one process or many.
//
// all_reduce must add in a fixed order (process 0 + 1 + …, not whichever arrives first), so a
// run repeats bit for bit with the same number of processes and threads.
#include <string>
#include <vector>

#include "core/tensor.h"

namespace uwaga::optim {

class GradientReduction {
 public:
  virtual ~GradientReduction() = default;
  // This process's place among those training each batch: it trains share rank() of size().
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Replaces `grads` (this process's gradient of the step, one tensor per parameter) and `sums`
  // (its loss, item and correct counts) by their sums over every process, the same on each.
  virtual void all_reduce(const std::vector<Tensor>& grads, std::vector<double>& sums) = 0;
  virtual std::string name() const = 0;  // for the run's summary and log
};

// One process: the threads' sum is already the whole batch's gradient.
class SingleProcess final : public GradientReduction {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce(const std::vector<Tensor>&, std::vector<double>&) override {}
  std::string name() const override { return "one process"; }
};

}  // namespace uwaga::optim
