#pragma once
// One run per output directory. Two processes training into one directory (a second terminal, a
// resume started while the run still goes on) would interleave their logs and overwrite each
// other's checkpoints. A run holds an exclusive flock() on the directory itself, released when it
// ends or dies; a second run fails at once, naming the directory. Where the file system cannot
// lock (some network mounts), runs go unlocked.
#include <string>

namespace uwaga::optim {

class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& dir);  // "" locks nothing
  ~DirectoryLock();
  // True when this process holds the directory's lock (false where the file system cannot lock):
  // then whatever an earlier run left half-written there is this run's to clean up.
  bool held() const { return held_; }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace uwaga::optim
