#include "core/threads.h"

#include <cblas.h>
#include <omp.h>

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>

#include "core/blas_kernels.h"
#include "core/error.h"

namespace uwaga {

namespace {

// OpenBLAS (0.3.21, OpenMP build) maps a buffer of about 140 MB of address space for each thread
// the first time a product runs on it. When an address-space limit (ulimit -v) leaves no room for
// them, its allocator waits for a buffer to come free, forever. So the thread count has to leave
// room: at most half of what the limit leaves, the rest being for the program's own data.
constexpr std::uint64_t kBlasBytesPerThread = std::uint64_t{160} << 20;

// Address space left under RLIMIT_AS (the limit less VmSize), or 0 when there is no limit.
std::uint64_t address_space_left() {
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
  std::uint64_t mapped = 0;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmSize:", 0) == 0) mapped = std::stoull(line.substr(7)) * 1024;
  return rl.rlim_cur > mapped ? rl.rlim_cur - mapped : 1;
}

// The most threads whose OpenBLAS buffers fit in half the address space left (at least 1); a
// large number when there is no limit.
int threads_that_fit(std::uint64_t left) {
  if (left == 0) return 1 << 20;
  return static_cast<int>(std::max<std::uint64_t>(1, left / 2 / kBlasBytesPerThread));
}

}  // namespace

void set_num_threads(int n) {
  if (n < 1) fail("threads: the thread count must be at least 1, got ", n);
  if (const std::uint64_t left = address_space_left(); n > threads_that_fit(left))
    fail("threads: ", n, " threads need about ", n * (kBlasBytesPerThread >> 20),
         " MB of address space for OpenBLAS's buffers, but the address-space limit (ulimit -v) "
         "leaves ", left >> 20, " MB; use at most ", threads_that_fit(left),
         " threads or raise the limit");
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
    if (!env || !*env) {  // as many as OpenMP would use, and as fit under an address-space limit
      set_num_threads(std::min(omp_get_max_threads(), threads_that_fit(address_space_left())));
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
