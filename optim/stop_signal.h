#pragma once
// Ctrl-C during training: the first SIGINT or SIGTERM asks the run to stop after the current step
// (and save a checkpoint); a second one ends the program at once.
//
// The handler only sets a flag; the training loop looks at it after each step, so an interruption
// always lands between two steps and the checkpoint it saves is consistent. SA_RESETHAND restores
// the default action, so a second Ctrl-C ends the program at once.
#include <signal.h>

namespace uwaga::optim {

// Installs the handler for its lifetime (a signal the program was told to ignore, under nohup or
// in a background job, stays ignored) and restores the previous handlers when it ends.
class StopSignalGuard {
 public:
  explicit StopSignalGuard(bool quiet);  // quiet: no "stopping after this step" message
  ~StopSignalGuard();
  StopSignalGuard(const StopSignalGuard&) = delete;
  StopSignalGuard& operator=(const StopSignalGuard&) = delete;

  // The signal received since the guard was installed (SIGINT or SIGTERM), or 0.
  static int stop_signal();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace uwaga::optim
