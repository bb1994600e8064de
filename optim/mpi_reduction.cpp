#include "optim/mpi_reduction.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace uwaga::optim {
namespace {

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail("MPI: ", what, " failed: ", std::string(text, static_cast<std::size_t>(length)));
}

// Every process knows the run is ending early (first_error found an error, or any() a stop):
// they end on their own rather than through MPI_Abort.
bool g_failure_agreed = false;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void initialize_once() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  check(MPI_Init(nullptr, nullptr), "MPI_Init");
  // Errors come back as codes (and become uwaga::Errors) instead of aborting the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::atexit(finalize_at_exit);
}

// The gradients of `params` (all defined) packed into one buffer, summed, and copied back.
template <class T>
std::int64_t sum_gradients(const std::vector<Tensor>& params, std::vector<T>& buffer,
                           MPI_Datatype type) {
  std::size_t n = 0;
  for (const Tensor& p : params) n += p.grad().defined() ? static_cast<std::size_t>(p.numel()) : 0;
  buffer.resize(n);
  std::size_t at = 0;
  for (const Tensor& p : params) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    std::memcpy(buffer.data() + at, g.data<T>(), sizeof(T) * static_cast<std::size_t>(g.numel()));
    at += static_cast<std::size_t>(g.numel());
  }
  check(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(n), type, MPI_SUM,
                      MPI_COMM_WORLD),
        "MPI_Allreduce (gradients)");
  at = 0;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    std::memcpy(g.data<T>(), buffer.data() + at, sizeof(T) * static_cast<std::size_t>(g.numel()));
    at += static_cast<std::size_t>(g.numel());
  }
  return static_cast<std::int64_t>(n * sizeof(T));
}

}  // namespace

MpiReduction::MpiReduction() {
  initialize_once();
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

std::string MpiReduction::name() const { return std::to_string(size_) + " MPI processes"; }

void MpiReduction::all_reduce(const std::vector<Tensor>& params, std::vector<double>& sums) {
  const auto start = std::chrono::steady_clock::now();
  // The sums, and which gradients exist anywhere: a parameter that took part in another
  // process's rows only gets a gradient of zeros here first, so every process packs the same.
  std::vector<double> small = sums;
  for (const Tensor& p : params) small.push_back(p.grad().defined() ? 1.0 : 0.0);
  check(MPI_Allreduce(MPI_IN_PLACE, small.data(), static_cast<int>(small.size()), MPI_DOUBLE,
                      MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce (loss and counts)");
  std::copy(small.begin(), small.begin() + static_cast<std::ptrdiff_t>(sums.size()), sums.begin());
  bool float64 = false;
  for (std::size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i];
    if (small[sums.size() + i] > 0 && !p.grad().defined())
      p.set_grad(Tensor::zeros(p.shape(), p.dtype()));
    float64 = float64 || p.dtype() == DType::Float64;
  }
  const std::int64_t bytes = float64 ? sum_gradients(params, buffer64_, MPI_DOUBLE)
                                     : sum_gradients(params, buffer32_, MPI_FLOAT);
  reduce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  reduce_bytes_ += bytes;
  ++reduce_calls_;
}

void MpiReduction::broadcast(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) {
    const MPI_Datatype type = t.dtype() == DType::Float64 ? MPI_DOUBLE
                              : t.dtype() == DType::Float32 ? MPI_FLOAT
                                                            : MPI_INT64_T;
    check(MPI_Bcast(const_cast<void*>(t.raw_data()), static_cast<int>(t.numel()), type, 0,
                    MPI_COMM_WORLD),
          "MPI_Bcast (parameters)");
  }
}

void MpiReduction::broadcast(std::string& bytes) {
  std::uint64_t n = bytes.size();
  check(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast (length)");
  bytes.resize(n);
  // In pieces below 2³¹ bytes: MPI counts are ints.
  constexpr std::uint64_t kPiece = 1u << 30;
  for (std::uint64_t at = 0; at < n; at += kPiece)
    check(MPI_Bcast(bytes.data() + at, static_cast<int>(std::min(kPiece, n - at)), MPI_BYTE, 0,
                    MPI_COMM_WORLD),
          "MPI_Bcast (bytes)");
}

bool MpiReduction::any(bool flag) {
  int mine = flag ? 1 : 0, anyone = 0;
  check(MPI_Allreduce(&mine, &anyone, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce (flag)");
  // Every process now stops at the same step (an interruption): they all end on their own.
  if (anyone) g_failure_agreed = true;
  return anyone != 0;
}

std::string MpiReduction::first_error(const std::string& message) {
  // The lowest failing rank, then its message from it.
  int mine = message.empty() ? size_ : rank_, first = size_;
  check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce (rank)");
  if (first == size_) return "";
  g_failure_agreed = true;
  std::uint64_t n = message.size();
  check(MPI_Bcast(&n, 1, MPI_UINT64_T, first, MPI_COMM_WORLD), "MPI_Bcast (length)");
  std::string text = rank_ == first ? message : std::string(n, '\0');
  check(MPI_Bcast(text.data(), static_cast<int>(n), MPI_BYTE, first, MPI_COMM_WORLD),
        "MPI_Bcast (message)");
  return "process " + std::to_string(first) + " of " + std::to_string(size_) + ": " + text;
}

void end_mpi(int status) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  if (status == 0 || g_failure_agreed) MPI_Finalize();
  else MPI_Abort(MPI_COMM_WORLD, status);
}

}  // namespace uwaga::optim
