#include "core/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/regular_file.h"

namespace uwaga {
namespace {

// Writes all of `bytes` to the open descriptor `fd`, retrying short writes; false with errno set
// on failure.
bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

OutputTarget output_target(const std::string& path, const std::string& where) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {path, false};  // a new name (or a dangling link)
  if (S_ISCHR(st.st_mode)) return {path, true};
  if (!S_ISREG(st.st_mode))
    fail(where, ": '", path, "' is ", file_kind(st.st_mode), "; output goes to a regular file "
         "(replaced whole) or a character device such as /dev/null");
  char* resolved = ::realpath(path.c_str(), nullptr);  // the file a link leads to
  if (!resolved) return {path, false};
  std::string target(resolved);
  std::free(resolved);
  return {target, false};
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  const OutputTarget target = output_target(path, "cannot write");
  if (target.character_device) {
    const int fd = ::open(target.path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail("cannot write '", path, "': ", std::strerror(errno));
    const bool written = write_all(fd, bytes);
    const int reason = errno;
    ::close(fd);
    if (!written) fail("cannot write '", path, "': ", std::strerror(reason));
    return;
  }
  const std::string tmp = target.path + ".tmp." + std::to_string(::getpid()) + ".0";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) fail("cannot write '", path, "': ", std::strerror(errno));
  const bool written = write_all(fd, bytes);
  const int err = errno;
  if (::close(fd) != 0 || !written) {
    const int reason = written ? errno : err;
    ::unlink(tmp.c_str());
    fail("cannot write '", path, "': ", reason ? std::strerror(reason) : "write error");
  }
  if (std::rename(tmp.c_str(), target.path.c_str()) != 0) {
    const int reason = errno;
    ::unlink(tmp.c_str());
    fail("cannot write '", path, "': ", std::strerror(reason));
  }
}

}  // namespace uwaga
