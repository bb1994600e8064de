#include "optim/jsonl_log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace uwaga::optim {

namespace {

// Cuts `f` (open for reading and writing) back to its last complete line; returns the number of
// bytes removed (0 when it is empty or ends with '\n').
long cut_partial_line(std::FILE* f, const std::string& path) {
  auto broken = [&](const char* what) {
    fail("Trainer: cannot ", what, " the log '", path, "': ", std::strerror(errno));
  };
  struct stat st;
  if (::fstat(::fileno(f), &st) != 0) broken("inspect");
  const off_t size = st.st_size;
  if (size == 0) return 0;
  // Read backwards in blocks to the last '\n'.
  off_t end = size;  // the partial line is [keep, size)
  char block[4096];
  while (end > 0) {
    const off_t begin = end > static_cast<off_t>(sizeof block) ? end - sizeof block : 0;
    const auto n = static_cast<std::size_t>(end - begin);
    if (::fseeko(f, begin, SEEK_SET) != 0 || std::fread(block, 1, n, f) != n) broken("read");
    for (std::size_t i = n; i-- > 0;) {
      if (block[i] == '\n') {
        const off_t keep = begin + static_cast<off_t>(i) + 1;
        if (keep == size) return 0;
        if (::ftruncate(::fileno(f), keep) != 0) broken("repair");
        return static_cast<long>(size - keep);
      }
    }
    end = begin;
  }
  if (::ftruncate(::fileno(f), 0) != 0) broken("repair");  // no complete line at all
  return static_cast<long>(size);
}

}  // namespace

JsonlLog::JsonlLog(const std::string& path) : path_(path) {
  if (path.empty()) return;
  // "a+": appends, and lets us read the end to see whether the last record was cut.
  out_ = std::fopen(path.c_str(), "a+");
  if (!out_)
    fail("Trainer: cannot open the log '", path, "' for appending: ", std::strerror(errno));
  try {
    if (const long cut = cut_partial_line(out_, path); cut > 0)
      note_ = "the log " + path + " ended inside a record (a run stopped mid-write): removed its " +
              std::to_string(cut) + "-byte incomplete last line";
  } catch (...) {
    std::fclose(out_);
    throw;
  }
}

JsonlLog::~JsonlLog() {
  if (out_) std::fclose(out_);
}

void JsonlLog::write(const nlohmann::json& record) {
  if (!out_) return;
  const std::string line = record.dump() + '\n';
  errno = 0;
  if (std::fwrite(line.data(), 1, line.size(), out_) != line.size() || std::fflush(out_) != 0) {
    const int err = errno;
    std::clearerr(out_);
    fail("Trainer: cannot write to the log '", path_, "': ",
         err ? std::strerror(err) : "write error");
  }
}

}  // namespace uwaga::optim
