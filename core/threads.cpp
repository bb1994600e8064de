#include "core/threads.h"

#include <cblas.h>
#include <omp.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "core/error.h"

namespace uwaga {

void set_num_threads(int n) {
  if (n < 1) fail("set_num_threads: thread count must be at least 1, got ", n);
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int num_threads() { return omp_get_max_threads(); }

int thread_index() { return omp_get_thread_num(); }

void init_threads() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("UWAGA_NUM_THREADS");
    if (!env || !*env) {
      set_num_threads(omp_get_max_threads());
      return;
    }
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (*end != '\0' || n < 1 || n > 1024)
      fail("UWAGA_NUM_THREADS: expected a positive integer, got '", env, "'");
    set_num_threads(static_cast<int>(n));
  });
}

}  // namespace uwaga
