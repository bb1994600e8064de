#include "optim/gradient_reduction.h"

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

void end_processes([[maybe_unused]] int status) {
#ifdef UWAGA_MPI
  end_mpi(status);
#endif
}

}  // namespace uwaga::optim
