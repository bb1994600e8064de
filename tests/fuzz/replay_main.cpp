// A main() in place of libFuzzer's: replays saved inputs through a fuzz target, without fuzzing.
// Linked with one tests/fuzz/fuzz_<name>.cpp by tests/CMakeLists.txt, it lets every build (GCC,
// and in CI under AddressSanitizer and UBSan) run each target's past findings
// (tests/fuzz/regressions/<name>) and seeds (tests/fuzz/corpus/<name>) as a CTest, where the real
// fuzzing needs clang and its libFuzzer (tests/fuzz/run.sh).
//
//   fuzz_idx_replay FILE_OR_DIRECTORY...     every file named, and every file in each directory
//
// An input passes when the target returns: fuzz_input.h lets a reader refuse it only with
// uwaga::Error, so any other exception escapes to std::terminate and a sanitizer report aborts,
// both after the input's name is printed. The limits are tests/fuzz/run.sh's: an input may take
// 10 s (SIGALRM ends the process) and the process may grow to 2 GB (its peak is checked after
// each input).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

constexpr unsigned kSecondsPerInput = 10;
constexpr long kMaxResidentMegabytes = 2048;

// The files to replay, in a fixed order: those named, and each named directory's regular files.
std::vector<std::filesystem::path> inputs(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    if (fs::is_directory(arg)) {
      std::vector<fs::path> in_directory;
      for (const auto& entry : fs::directory_iterator(arg))
        if (entry.is_regular_file()) in_directory.push_back(entry.path());
      std::sort(in_directory.begin(), in_directory.end());
      files.insert(files.end(), in_directory.begin(), in_directory.end());
    } else if (fs::is_regular_file(arg)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", argv[i]);
      std::exit(2);
    }
  }
  return files;
}

// The input in a buffer of exactly its size, as libFuzzer passes it, so that AddressSanitizer
// sees a read one byte past the end.
std::unique_ptr<std::uint8_t[]> read_bytes(const std::filesystem::path& file, std::size_t& size) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
  if (!in.good() && !in.eof()) {
    std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
    std::exit(2);
  }
  size = bytes.size();
  auto buffer = std::make_unique<std::uint8_t[]>(size);
  std::copy(bytes.begin(), bytes.end(), buffer.get());
  return buffer;
}

long peak_resident_megabytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;  // Linux reports kilobytes
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...\n", argv[0]);
    return 2;
  }
  const auto files = inputs(argc, argv);
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input files in the paths given\n");
    return 2;
  }
  for (const auto& file : files) {
    std::printf("%s\n", file.c_str());
    std::fflush(stdout);  // named before a crash or a sanitizer report
    std::size_t size = 0;
    const auto data = read_bytes(file, size);
    alarm(kSecondsPerInput);
    LLVMFuzzerTestOneInput(data.get(), size);
    alarm(0);
    if (const long peak = peak_resident_megabytes(); peak > kMaxResidentMegabytes) {
      std::fprintf(stderr, "replay: %s took the process to %ld MB (limit %ld MB)\n", file.c_str(),
                   peak, kMaxResidentMegabytes);
      return 1;
    }
  }
  std::printf("%zu inputs replayed, no finding\n", files.size());
  return 0;
}
