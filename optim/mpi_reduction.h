#pragma once
// MpiReduction: the processes of an `mpirun -np N` launch, over MPI's world communicator
// (OpenMPI). Built only when CMake finds MPI (UWAGA_MPI); optim/gradient_reduction.h picks it
// when the program runs under mpirun.
//
// One step exchanges the whole gradient once: every parameter's gradient packed into one buffer
// (float32 or float64, the parameters' dtype) and summed with one MPI_Allreduce, plus one small
// one for the loss, item and correct counts and which gradients exist. For a given number of
// processes and message size OpenMPI's reduction runs the same algorithm, in the same order, on
// every step and on every process, so every process holds the same sum and a run repeats bit for
// bit.
//
// A process that dies (kill -9, a crash) makes mpirun end the others: a blocked MPI_Allreduce
// never returns otherwise.
#include <cstdint>
#include <string>
#include <vector>

#include "optim/gradient_reduction.h"

namespace uwaga::optim {

class MpiReduction final : public GradientReduction {
 public:
  MpiReduction();  // initialises MPI once per program; finalised at exit
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override;
  void all_reduce(const std::vector<Tensor>& params, std::vector<double>& sums) override;
  void broadcast(const std::vector<Tensor>& tensors) override;
  void broadcast(std::string& bytes) override;
  bool any(bool flag) override;
  std::string first_error(const std::string& message) override;

  // Time spent in all_reduce and the bytes it handed to MPI (this process), since the start.
  double reduce_seconds() const { return reduce_seconds_; }
  std::int64_t reduce_bytes() const { return reduce_bytes_; }
  std::int64_t reduce_calls() const { return reduce_calls_; }

 private:
  int rank_ = 0, size_ = 1;
  std::vector<float> buffer32_;
  std::vector<double> buffer64_;
  double reduce_seconds_ = 0;
  std::int64_t reduce_bytes_ = 0, reduce_calls_ = 0;
};

// end_processes (gradient_reduction.h) under MPI.
void end_mpi(int status);

}  // namespace uwaga::optim
