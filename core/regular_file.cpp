#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace uwaga {

std::string file_kind(unsigned st_mode) {
  switch (st_mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO (named pipe)";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    default: return "not a file";
  }
}

FilePtr open_regular_file(const std::string& path, const std::string& where) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. It is cleared
  // again once fstat has shown a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(where, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    fail(where, ": cannot examine: ", std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(where, ": is ", file_kind(st.st_mode), ", not a regular file");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::FILE* f = ::fdopen(fd, "rb");
  if (!f) {
    const int error = errno;
    ::close(fd);
    fail(where, ": cannot open: ", std::strerror(error));
  }
  return FilePtr(f);
}

std::string read_regular_file(const std::string& path, std::uint64_t max_bytes,
                              const std::string& where) {
  FilePtr file = open_regular_file(path, where);
  struct stat st {};
  if (::fstat(::fileno(file.get()), &st) == 0 && static_cast<std::uint64_t>(st.st_size) > max_bytes)
    fail(where, ": holds ", st.st_size, " bytes, more than the ", max_bytes,
         " read into memory at most");
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) {
    bytes.append(buffer, n);
    if (bytes.size() > max_bytes)  // it grew while being read
      fail(where, ": holds more than the ", max_bytes, " bytes read into memory at most");
  }
  if (std::ferror(file.get())) fail(where, ": cannot read: ", std::strerror(errno));
  return bytes;
}

}  // namespace uwaga
