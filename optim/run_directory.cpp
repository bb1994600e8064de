#include "optim/run_directory.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "optim/checkpoint.h"

namespace uwaga::optim {

RunDirectory::RunDirectory(const std::string& out_dir, const std::string& checkpoint, bool resume,
                           GradientReduction& processes) {
  std::string error;
  if (processes.rank() == 0 && !out_dir.empty()) {
    try {
      std::error_code ec;
      std::filesystem::create_directories(out_dir, ec);
      if (ec) fail("Trainer: cannot create the output directory '", out_dir, "': ", ec.message());
      // A directory this process may read but not write (read-only, immutable, another user's)
      // would fail only at the first save, an epoch later; it fails now, naming why.
      if (::access(out_dir.c_str(), W_OK | X_OK) != 0)
        fail("Trainer: cannot write into the output directory '", out_dir, "': ",
             std::strerror(errno));
      lock_.emplace(out_dir);
      // A fresh run would overwrite the checkpoint at its first save: the earlier run's work,
      // lost.
      if (!resume && std::filesystem::exists(checkpoint))
        fail("Trainer: '", out_dir, "' already holds a run (", checkpoint,
             "); continue it with resume, or train into another out_dir");
      const std::vector<std::string> stale =
          lock_->held() ? remove_stale_temporaries(out_dir) : std::vector<std::string>();
      if (!stale.empty())
        note_ = "removed " + std::to_string(stale.size()) + " temporary file(s) of an " +
                "interrupted save from " + out_dir + ": " + stale.front() +
                (stale.size() > 1 ? ", ..." : "");
    } catch (const Error& e) {
      error = e.what();
    }
  }
  if (std::string first = processes.first_error(error); !first.empty()) fail(first);
}

}  // namespace uwaga::optim
