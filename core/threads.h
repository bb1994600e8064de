#pragma once
// One thread count for uwaga's OpenMP loops and OpenBLAS alike (Debian's OpenMP build of OpenBLAS
// shares the OpenMP thread pool, so the two never oversubscribe the cores).
// The count comes from UWAGA_NUM_THREADS when set, else OpenMP's default.

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

}  // namespace uwaga
