#pragma once
// How idle OpenMP threads wait between parallel regions. A training step runs a few hundred short
// parallel regions (one per large op), so the choice matters:
//  - spinning (libgomp's default: 300,000 spins) steals the core from the thread doing the work
//    whenever the machine has anything else to run — mnist-tiny on 2 threads next to a compiler:
//    133 images/s spinning against 2,300 with OMP_WAIT_POLICY=PASSIVE;
//  - sleeping at once (PASSIVE) costs a kernel wake-up per region — on an idle machine 3,550
//    images/s against 5,000 spinning;
//  - a short spin (GOMP_SPINCOUNT=10000, about a tenth of a millisecond) then sleeping is as fast
//    as spinning when the cores are free and loses about a quarter when they are shared.
// So: a short spin when the machine is idle at start, PASSIVE when it is busy. libgomp reads
// these variables once, when it is loaded, so the program sets them and starts again.
namespace uwaga::apps {

// When neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set: sets GOMP_SPINCOUNT=10000 if the
// one-minute load average is below 0.5, else OMP_WAIT_POLICY=PASSIVE, and re-executes the
// program with the same arguments (returns only if that fails). Explicit settings are left alone.
void choose_openmp_wait_policy(char** argv);

// The cores this process may run on (its CPU affinity: a container's or taskset's share).
int available_cores();

// --threads N above available_cores(): the threads take turns on the cores, every parallel region
// waits for the slowest, and training gets slower, not faster. Says so on stderr, once a process.
void warn_if_more_threads_than_cores(const char* program, int threads);

}  // namespace uwaga::apps
