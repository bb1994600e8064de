#pragma once
// A fresh directory under the system's temporary directory for one test, removed with everything
// in it when the test ends (also when a check fails). mkdtemp makes the name unique, so tests
// running at once — ctest -j, or one test's several TempDirs — never share one.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace uwaga::testing {

class TempDir {
 public:
  // label: part of the directory's name, to tell which test left it behind if a run is killed.
  explicit TempDir(const std::string& label = "test") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / ("uwaga-" + label + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("TempDir: cannot create a directory like " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string str() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

  // The names of the files in it, sorted: what a test expects to find there and nothing more.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace uwaga::testing
