#include "core/threads.h"

#include <cblas.h>
#include <omp.h>

#include <cstdlib>
#include <mutex>

#include "core/blas_kernels.h"
#include "core/error.h"

namespace uwaga {

void set_num_threads(int n) {
  if (n < 1) fail("threads: the thread count must be at least 1, got ", n);
  choose_blas_kernels();  // before any product (core/blas_kernels.h)
  const int before = omp_get_max_threads();
  omp_set_num_threads(n);
  openblas_set_num_threads(n);  // caps OpenMP's count too, at the most threads it was built for
  if (omp_get_max_threads() != n) {
    const int most = omp_get_max_threads();
    omp_set_num_threads(before);
    openblas_set_num_threads(before);
    fail("threads: ", n, " asked, but OpenBLAS runs at most ", most);
  }
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
    if (*end != '\0' || end == env || n < 1 || n > 1024)
      fail("UWAGA_NUM_THREADS: expected a whole number from 1 to 1024, got '", env, "'");
    set_num_threads(static_cast<int>(n));
  });
}

}  // namespace uwaga
