#pragma once
// The output directory of one Trainer::fit, made ready before the first step: created, writable,
// locked against a second run training into it (optim/directory_lock), not holding a run that a
// new one would overwrite, and cleared of the temporaries of a save an earlier run did not finish.
// Process 0 alone writes into it; the other processes fail with its message when it cannot.
#include <optional>
#include <string>

#include "optim/directory_lock.h"
#include "optim/gradient_reduction.h"

namespace uwaga::optim {

class RunDirectory {
 public:
  // Every process constructs it. `out_dir` "" means no files (nothing to prepare); `checkpoint`
  // is out_dir's checkpoint.safetensors, which a new run (not `resume`) must not find there.
  RunDirectory(const std::string& out_dir, const std::string& checkpoint, bool resume,
               GradientReduction& processes);
  // "removed 2 temporary file(s) of an interrupted save from DIR: ..." when process 0 did, else "".
  const std::string& note() const { return note_; }

 private:
  std::optional<DirectoryLock> lock_;  // held until fit() returns
  std::string note_;
};

}  // namespace uwaga::optim
