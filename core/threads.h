#pragma once
// One thread count for uwaga's OpenMP loops and OpenBLAS alike (Debian's OpenMP build of OpenBLAS
// shares the OpenMP thread pool, so the two never oversubscribe the cores).
// The count comes from UWAGA_NUM_THREADS when set, else OpenMP's default.
#include <omp.h>

#include <cstdint>

namespace uwaga {

void set_num_threads(int n);
int num_threads();
// Which thread of the enclosing parallel region this is: 0 … num_threads() − 1 (0 outside one).
// For per-thread scratch buffers.
int thread_index();
// Reads UWAGA_NUM_THREADS once; ops call it before their first parallel loop.
void init_threads();

// Loops with fewer elements than this run on one thread: forking costs more than it saves.
constexpr long kParallelThreshold = 32768;

// The loop over i = 0 … n − 1, as body(begin, end) on contiguous pieces: one piece per thread
// when `worth_forking` (the loop is big enough to pay for waking the threads), else body(0, n)
// right here. It stays on the calling thread as well when there is one thread, or when it is
// already inside a parallel region (a DataParallel replica, one head of attention), where a
// nested region would get one thread anyway.
//
// Why not `#pragma omp parallel for if (…)`: a region that runs on one thread still sets up a
// team and makes a futex system call (libgomp), about 0.6 µs. A training step of the reference
// ViT enters ~1000 such regions per thread.
//
// Every caller hands out independent work (no sum runs across pieces), so results do not depend
// on how the loop was cut.
template <class Body>
void parallel_for(std::int64_t n, bool worth_forking, Body&& body) {
  if (n <= 0) return;
  if (n == 1 || !worth_forking || omp_in_parallel() || num_threads() == 1) {
    body(std::int64_t{0}, n);
    return;
  }
#pragma omp parallel
  {
    const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    const std::int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    if (end > begin) body(begin, end);
  }
}

}  // namespace uwaga
