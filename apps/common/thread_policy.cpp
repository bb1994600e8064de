#include "apps/common/thread_policy.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

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

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

void warn_if_more_threads_than_cores(const char* program, int threads) {
  static bool warned = false;
  const int cores = available_cores();
  if (warned || threads <= cores) return;
  warned = true;
  std::fprintf(stderr, "%s: warning: --threads %d but only %d core%s available: the threads "
               "will take turns, which is slower than --threads %d\n",
               program, threads, cores, cores == 1 ? " is" : "s are", cores);
}

void choose_openmp_wait_policy(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  if (load_average() < 0.5) setenv("GOMP_SPINCOUNT", "10000", 1);
  else setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv);  // only returns on failure: carry on with the default policy
}

}  // namespace uwaga::apps
