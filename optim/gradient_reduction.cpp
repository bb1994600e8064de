#include "optim/gradient_reduction.h"

#include <cstdio>
#include <cstdlib>

#include "core/error.h"
#ifdef UWAGA_MPI
#include "optim/mpi_reduction.h"
#endif

namespace uwaga::optim {

std::unique_ptr<GradientReduction> processes_of_this_run() {
  // mpirun (OpenMPI) tells each process the size of its world in the environment.
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
#ifdef UWAGA_MPI
  if (world) return std::make_unique<MpiReduction>();
#else
  if (world && std::atoi(world) > 1)
    fail("started by mpirun with ", world, " processes, but uwaga was built without MPI: each "
         "would train alone. Install OpenMPI (apt-get install openmpi-bin libopenmpi-dev) and "
         "build again (bash apps/setup.sh)");
#endif
  return std::make_unique<SingleProcess>();
}

namespace {

// FNV-1a over the parameters' bytes: equal values, equal checksums.
std::uint64_t checksum(const std::vector<Tensor>& params) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const Tensor& p : params) {
    const auto* bytes = static_cast<const unsigned char*>(p.raw_data());
    const std::size_t n = static_cast<std::size_t>(p.numel()) * dtype_size(p.dtype());
    for (std::size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  }
  return h;
}

std::string hex(std::uint64_t x) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

}  // namespace

void start_from_process_0(GradientReduction& processes, const std::vector<Tensor>& params) {
  if (processes.size() == 1) return;
  const std::uint64_t mine = checksum(params);
  processes.broadcast(params);
  const std::uint64_t theirs = checksum(params);
  const std::string error =
      mine == theirs ? std::string()
                     : "Trainer: this process built other initial parameters than process 0 "
                       "(checksum " + hex(mine) + " against " + hex(theirs) + "): every process "
                       "must build the same model from the same seed";
  if (std::string first = processes.first_error(error); !first.empty()) fail(first);
}

void end_processes([[maybe_unused]] int status) {
#ifdef UWAGA_MPI
  end_mpi(status);
#endif
}

}  // namespace uwaga::optim
