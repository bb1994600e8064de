#pragma once
// What every fuzz target shares: the input as a file (the readers take paths), and the rule that
// a reader may refuse an input only with uwaga::Error. Anything else — another exception, a
// crash, a sanitizer report, a hang, an allocation beyond -rss_limit_mb — is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.h"

namespace uwaga::fuzz {

// One file per process, rewritten for each input: in /dev/shm when there is one (no disk I/O).
inline const std::string& input_path(const char* suffix = "") {
  static const std::string path = [&] {
    const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/uwaga-fuzz-" + std::to_string(::getpid()) + suffix;
  }();
  return path;
}

inline const std::string& write_input(const std::uint8_t* data, std::size_t size,
                                      const char* suffix = "") {
  const std::string& path = input_path(suffix);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

// Runs `read`; uwaga::Error is a refusal (fine), everything else escapes to libFuzzer.
template <class F>
void expect_error_or_success(F&& read) {
  try {
    read();
  } catch (const uwaga::Error&) {
  }
}

}  // namespace uwaga::fuzz
