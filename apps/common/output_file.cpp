#include "apps/common/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace uwaga::apps {

void write_file_atomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + ".0";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail("cannot write '", path, "': ", std::strerror(errno));
  errno = 0;
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !written) {
    const int reason = err ? err : errno;
    std::remove(tmp.c_str());
    fail("cannot write '", path, "': ", reason ? std::strerror(reason) : "write error");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int reason = errno;
    std::remove(tmp.c_str());
    fail("cannot write '", path, "': ", std::strerror(reason));
  }
}

}  // namespace uwaga::apps
