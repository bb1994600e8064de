#include "apps/common/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"

namespace uwaga::apps {
namespace {

constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();

std::uint64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<std::uint64_t>(pages) * size : kUnlimited;
}

std::uint64_t cgroup_room() {
  std::ifstream max("/sys/fs/cgroup/memory.max"), current("/sys/fs/cgroup/memory.current");
  std::string limit;
  std::uint64_t used = 0;
  if (!(max >> limit) || limit == "max" || !(current >> used)) return kUnlimited;
  const std::uint64_t cap = std::stoull(limit);
  return cap > used ? cap - used : 0;
}

}  // namespace

std::uint64_t mapped_now() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  return 0;
}

MemoryLimit memory_limit() {
  MemoryLimit m{mem_available(), "available memory (MemAvailable)"};
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t used = mapped_now();
    const std::uint64_t room = rl.rlim_cur > used ? rl.rlim_cur - used : 0;
    if (room < m.bytes) m = {room, "the address-space limit (ulimit -v)"};
  }
  if (const std::uint64_t room = cgroup_room(); room < m.bytes)
    m = {room, "the control group's memory.max"};
  return m;
}

std::string human_bytes(double bytes) {
  char text[32];
  if (bytes >= 1e12) std::snprintf(text, sizeof text, "%.1f TB", bytes / 1e12);
  else if (bytes >= 1e9) std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  else std::snprintf(text, sizeof text, "%.0f MB", bytes / 1e6);
  return text;
}

double training_bytes(const TransformerFootprint& f) {
  const double per_layer = f.batch * f.tokens * (16 * f.dim + 3 * f.mlp_dim) +
                           3 * f.batch * f.heads * f.tokens * f.tokens;
  return 4 * (4 * f.params + f.layers * per_layer);
}

double inference_bytes(const TransformerFootprint& f) {
  const double one_layer = f.batch * f.tokens * (16 * f.dim + 3 * f.mlp_dim) +
                           3 * f.batch * f.heads * f.tokens * f.tokens;
  return 4 * (f.params + one_layer);
}

void check_fits_in_memory(const std::string& who, double need, const std::string& breakdown,
                          const std::string& advice) {
  const MemoryLimit limit = memory_limit();
  if (limit.bytes == kUnlimited || need <= 0.9 * static_cast<double>(limit.bytes)) return;
  fail(who, " needs about ", human_bytes(need), " (", breakdown, "), more than the ",
       human_bytes(static_cast<double>(limit.bytes)), " of ", limit.source, "; ", advice);
}

void check_training_fits(const TransformerFootprint& f, const std::string& flags) {
  const double params = 4 * 4 * f.params, total = training_bytes(f);
  char breakdown[200];
  std::snprintf(breakdown, sizeof breakdown,
                "%.3g parameters with their gradients and Adam's moments: %s; activations of "
                "%.0f x %.0f tokens: %s",
                f.params, human_bytes(params).c_str(), f.batch, f.tokens,
                human_bytes(total - params).c_str());
  check_fits_in_memory("train: the run", total, breakdown, "make " + flags + " smaller");
}

void check_loading_fits(const std::string& checkpoint, double values) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(checkpoint, ec);
  const double model = 4 * values, file = ec ? 0.0 : static_cast<double>(size);
  char breakdown[200];
  std::snprintf(breakdown, sizeof breakdown,
                "the model's %.3g parameters: %s; the checkpoint's tensors, read whole: %s",
                values, human_bytes(model).c_str(), human_bytes(file).c_str());
  check_fits_in_memory("loading '" + checkpoint + "'", model + file, breakdown,
                       "free some memory, or run it on a machine with more");
}

}  // namespace uwaga::apps
