#pragma once
// GradientReduction: the last stage of a step's gradient, where the pieces computed apart are
// added up — and the few other things the processes training one model must agree on.
//
// A step's gradient is computed in pieces (data_parallel.h): each replica of the model, one per
// thread, backpropagates its share of the batch, and the sum of the pieces is the whole batch's
// gradient. Inside a process the threads add their replicas' gradients into the model's. When
// several processes train one batch together (each its own share of the rows), their sums must
// be added up once more, across the processes: that is this interface's main job. Everything
// above it — the models, the data, the apps — is the same whether a step runs in one process or
// many. The Trainer also uses it to start every process from process 0's parameters (or
// checkpoint), to stop them all at the same step (Ctrl-C on any of them), and to fail them all
// with one message when any of them fails.
//
// all_reduce must add in a fixed order for a given number of processes, so a run repeats bit for
// bit with the same number of processes and threads. Every process must make the same calls in
// the same order (they are collective).
#include <memory>
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
  virtual std::string name() const = 0;  // for the run's summary and log

  // Replaces the gradients of `params` (this process's gradient of the step; undefined where a
  // parameter took no part) and `sums` (its loss, item and correct counts) by their sums over
  // every process, the same on each. A gradient undefined on every process stays so.
  virtual void all_reduce(const std::vector<Tensor>& params, std::vector<double>& sums) = 0;
  // Process 0's values of `tensors` (same shapes and dtypes everywhere) copied into every other
  // process's, in place.
  virtual void broadcast(const std::vector<Tensor>& tensors) = 0;
  // Process 0's `bytes` handed to every process.
  virtual void broadcast(std::string& bytes) = 0;
  // True on every process when `flag` is true on any.
  virtual bool any(bool flag) = 0;
  // Every process passes its error message ("" when it has none) and gets the same answer: the
  // message of the lowest rank that has one, prefixed with that rank when there are several
  // processes, or "" when none failed.
  virtual std::string first_error(const std::string& message) = 0;
};

// One process: the threads' sum is already the whole batch's gradient, and there is no one else
// to agree with.
class SingleProcess final : public GradientReduction {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "one process"; }
  void all_reduce(const std::vector<Tensor>&, std::vector<double>&) override {}
  void broadcast(const std::vector<Tensor>&) override {}
  void broadcast(std::string&) override {}
  bool any(bool flag) override { return flag; }
  std::string first_error(const std::string& message) override { return message; }
};

// The processes of this run: MPI's world when the program was started by mpirun and uwaga was
// built with MPI (optim/mpi_reduction.h), else one process. Fails when started by mpirun with
// several processes but built without MPI (each would train alone, unaware of the others).
std::unique_ptr<GradientReduction> processes_of_this_run();

// Every process's `params` set to process 0's values, at the start of a run of several. Every
// process built its model from the same seed, so the values agree already; they are copied
// anyway, and a process whose own values differed fails, as all do, naming their checksums
// (another seed, other flags). Nothing to do in a single process.
void start_from_process_0(GradientReduction& processes, const std::vector<Tensor>& params);

// The end of this process's part in a run of several: with status 0, or after an error every
// process agreed on (first_error), MPI is finalised and each exits on its own; after any other
// failure every process of the run is ended at once (MPI_Abort), so none waits forever for this
// one. Nothing to do in a single process. Call it last, with the program's exit status.
void end_processes(int status);

}  // namespace uwaga::optim
