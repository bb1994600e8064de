#include "core/storage.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace uwaga {
namespace {

constexpr std::size_t kAlignment = 64;  // a cache line; also what AVX-512 loads like

struct Cache {
  std::mutex mutex;
  std::unordered_map<std::size_t, std::vector<void*>> free_lists;  // rounded size -> buffers
  AllocatorStats stats;
  ~Cache() {
    for (auto& entry : free_lists)
      for (void* p : entry.second) std::free(p);
  }
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: tensors may outlive static destructors
  return *c;
}

std::size_t round_up(std::size_t bytes) {
  std::size_t b = bytes == 0 ? kAlignment : bytes;
  return (b + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace

Storage::Storage(std::size_t bytes) : bytes_(bytes) {
  std::size_t size = round_up(bytes);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.free_lists.find(size);
    if (it != c.free_lists.end() && !it->second.empty()) {
      data_ = it->second.back();
      it->second.pop_back();
      c.stats.cache_hits++;
      c.stats.cached_bytes -= size;
      return;
    }
    c.stats.system_allocations++;
  }
  data_ = std::aligned_alloc(kAlignment, size);
  if (!data_) throw std::bad_alloc();
}

Storage::~Storage() {
  Cache& c = cache();
  std::size_t size = round_up(bytes_);
  std::lock_guard<std::mutex> lock(c.mutex);
  c.free_lists[size].push_back(data_);
  c.stats.cached_bytes += size;
}

AllocatorStats allocator_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.stats;
}

void release_cached_memory() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& entry : c.free_lists)
    for (void* p : entry.second) std::free(p);
  c.free_lists.clear();
  c.stats.cached_bytes = 0;
}

}  // namespace uwaga
