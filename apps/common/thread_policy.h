#pragma once
// OpenMP threads that wait by spinning (libgomp's default) steal the core from the thread doing
// the work whenever the machine has anything else to run: measured here with mnist-tiny on 2
// threads next to a compiler, 133 images/s spinning against 2,300 images/s with
// OMP_WAIT_POLICY=PASSIVE. libgomp reads the variable once, when it is loaded, so a program that
// wants the passive policy by default has to set it and start again.
namespace uwaga::apps {

// When OMP_WAIT_POLICY is unset: sets it to PASSIVE and re-executes the program with the same
// arguments (returns only if that fails). An explicit OMP_WAIT_POLICY is left alone.
void prefer_passive_openmp_wait(char** argv);

}  // namespace uwaga::apps
