#include "core/storage.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <map>
#include <vector>

namespace uwaga {
namespace {

constexpr std::size_t kAlignment = 64;  // a cache line; also what AVX-512 loads like

// One cache per thread. A buffer goes back to the free lists of the thread that allocated it,
// whichever thread frees it, and that thread's next request that fits it takes it: a thread
// reuses memory its own core has just touched, threads rarely wait for each other's lock, and
// no cache grows without bound when buffers cross threads (optim::DataParallel's replicas
// allocate their gradients on their own threads; the main thread frees them every step). The
// mutex is taken by the owning thread, by a thread freeing one of its buffers, and by
// allocator_stats() / release_cached_memory().
// Aligned to a cache line of its own: two threads' caches side by side on the heap would make
// every allocation on one core invalidate the other core's copy of its lock.
struct alignas(64) Cache {
  std::mutex mutex;
  // capacity -> free buffers of that capacity. Lists that empty stay in the map (with their
  // reserved vectors), so the steady state inserts no nodes: no malloc per tensor.
  std::map<std::size_t, std::vector<void*>> free_lists;
  AllocatorStats stats;
};

// Every thread's cache, for the statistics and for releasing memory. Caches are never destroyed:
// tensors may outlive static destructors and the threads that made them (the buffers a finished
// thread kept stay cached until release_cached_memory()).
struct Registry {
  std::mutex mutex;
  std::vector<Cache*> caches;
};

Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

Cache& cache() {
  thread_local Cache* c = [] {
    Cache* made = new Cache();
    std::lock_guard<std::mutex> lock(registry().mutex);
    registry().caches.push_back(made);
    return made;
  }();
  return *c;
}

std::size_t round_up(std::size_t bytes) {
  std::size_t b = bytes == 0 ? kAlignment : bytes;
  return (b + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace

Storage::Storage(std::size_t bytes) : bytes_(bytes) {
  const std::size_t size = round_up(bytes);
  Cache& c = cache();
  home_ = &c;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    // The smallest free buffer of at least `size` bytes, if it is no more than twice that: the
    // same size when there is one (fixed shapes), else a neighbour (shapes that vary), never a
    // much larger buffer that a larger request will want.
    for (auto it = c.free_lists.lower_bound(size);
         it != c.free_lists.end() && it->first <= 2 * size; ++it) {
      if (it->second.empty()) continue;
      data_ = it->second.back();
      it->second.pop_back();
      capacity_ = it->first;
      c.stats.cache_hits++;
      c.stats.cached_bytes -= capacity_;
      return;
    }
    c.stats.system_allocations++;
  }
  capacity_ = size;
  data_ = std::aligned_alloc(kAlignment, size);
  if (!data_) throw std::bad_alloc();
}

Storage::~Storage() {
  Cache& c = *static_cast<Cache*>(home_);  // the allocating thread's cache
  std::lock_guard<std::mutex> lock(c.mutex);
  c.free_lists[capacity_].push_back(data_);
  c.stats.cached_bytes += capacity_;
}

AllocatorStats allocator_stats() {
  AllocatorStats total;
  std::lock_guard<std::mutex> lock(registry().mutex);
  for (Cache* c : registry().caches) {
    std::lock_guard<std::mutex> cache_lock(c->mutex);
    total.system_allocations += c->stats.system_allocations;
    total.cache_hits += c->stats.cache_hits;
    total.cached_bytes += c->stats.cached_bytes;
  }
  return total;
}

void release_cached_memory() {
  std::lock_guard<std::mutex> lock(registry().mutex);
  for (Cache* c : registry().caches) {
    std::lock_guard<std::mutex> cache_lock(c->mutex);
    for (auto& entry : c->free_lists)
      for (void* p : entry.second) std::free(p);
    c->free_lists.clear();
    c->stats.cached_bytes = 0;
  }
}

}  // namespace uwaga
