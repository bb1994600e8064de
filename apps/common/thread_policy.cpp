#include "apps/common/thread_policy.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace uwaga::apps {
namespace {

// The one-minute load average, or a large number when it cannot be read.
double load_average() {
  double load = 1e9;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 1e9;
    std::fclose(f);
  }
  return load;
}

}  // namespace

void choose_openmp_wait_policy(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  if (load_average() < 0.5) setenv("GOMP_SPINCOUNT", "10000", 1);
  else setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv);  // only returns on failure: carry on with the default policy
}

}  // namespace uwaga::apps
