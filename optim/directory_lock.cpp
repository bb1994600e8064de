#include "optim/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "core/error.h"

namespace uwaga::optim {

DirectoryLock::DirectoryLock(const std::string& dir) {
  if (dir.empty()) return;
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) return;  // writing into it will fail with a clearer error
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
    held_ = true;
    return;
  }
  if (errno != EWOULDBLOCK) return;
  ::close(fd_);
  fd_ = -1;
  fail("Trainer: another run is already training into '", dir,
       "' (it holds the directory's lock); wait for it to end, or use another output directory");
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace uwaga::optim
