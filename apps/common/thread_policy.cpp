#include "apps/common/thread_policy.h"

#include <unistd.h>

#include <cstdlib>

namespace uwaga::apps {

void prefer_passive_openmp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv);  // only returns on failure: carry on with the default policy
}

}  // namespace uwaga::apps
