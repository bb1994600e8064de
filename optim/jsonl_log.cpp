#include "optim/jsonl_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/regular_file.h"

namespace uwaga::optim {

namespace {

[[noreturn]] void broken(const char* what, const std::string& path, int err) {
  fail("Trainer: cannot ", what, " the log '", path, "': ", std::strerror(err));
}

// Cuts the file `fd` back to its last complete line; returns its new size and sets `cut` to the
// bytes removed (0 when it is empty or ends with '\n').
off_t cut_partial_line(int fd, const std::string& path, long long* cut) {
  struct stat st;
  if (::fstat(fd, &st) != 0) broken("inspect", path, errno);
  const off_t size = st.st_size;
  *cut = 0;
  // Read backwards in blocks to the last '\n'.
  off_t end = size;  // the partial line is [keep, size)
  char block[4096];
  while (end > 0) {
    const off_t begin = end > static_cast<off_t>(sizeof block) ? end - sizeof block : 0;
    const auto n = static_cast<std::size_t>(end - begin);
    if (::pread(fd, block, n, begin) != static_cast<ssize_t>(n)) broken("read", path, errno);
    for (std::size_t i = n; i-- > 0;) {
      if (block[i] == '\n') {
        const off_t keep = begin + static_cast<off_t>(i) + 1;
        if (keep < size && ::ftruncate(fd, keep) != 0) broken("repair", path, errno);
        *cut = size - keep;
        return keep;
      }
    }
    end = begin;
  }
  if (size > 0 && ::ftruncate(fd, 0) != 0) broken("repair", path, errno);  // no complete line
  *cut = size;
  return 0;
}

}  // namespace

JsonlLog::JsonlLog(const std::string& path) : path_(path) {
  if (path.empty()) return;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd_ < 0)
    fail("Trainer: cannot open the log '", path, "' for appending: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && !S_ISREG(st.st_mode)) {  // a FIFO would block the first read
    ::close(fd_);
    fd_ = -1;
    fail("Trainer: the log '", path, "' is ", file_kind(st.st_mode), ", not a regular file");
  }
  try {
    long long cut = 0;
    size_ = cut_partial_line(fd_, path, &cut);
    if (cut > 0)
      note_ = "the log " + path + " ended inside a record (a run stopped mid-write): removed its " +
              std::to_string(cut) + "-byte incomplete last line";
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

JsonlLog::~JsonlLog() {
  if (fd_ >= 0) ::close(fd_);
}

void JsonlLog::write(const nlohmann::json& record) {
  if (fd_ < 0) return;
  const std::string line = record.dump() + '\n';
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      const int err = n < 0 ? errno : ENOSPC;  // 0 bytes written: nothing more fits
      // The part that fit would leave a cut line for the next record to follow.
      if (done > 0) (void)::ftruncate(fd_, size_);
      fail("Trainer: cannot write to the log '", path_, "': ", std::strerror(err));
    }
  }
  size_ += static_cast<long long>(line.size());
}

}  // namespace uwaga::optim
