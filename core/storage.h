#pragma once
// Storage: one aligned buffer of bytes, shared by a tensor and its views (reshape, squeeze, ...).
//
// Buffers come from a small caching allocator: a freed buffer goes back to a free list keyed by
// its size (one set of lists per thread: those of the thread that allocated it), and a later
// request on that thread takes the smallest free buffer that holds it, if that buffer is at most
// twice the size asked for. A training step of fixed shapes allocates the same sizes every time,
// so after the first step it makes no calls to malloc for tensor data; steps whose shapes vary
// (sentences of different lengths) share buffers across nearby sizes instead of keeping a set
// per shape.
#include <cstddef>
#include <cstdint>
#include <memory>

namespace uwaga {

class Storage {
 public:
  explicit Storage(std::size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

  // How many times the values have been changed in place (Tensor::fill_, copy_from, set,
  // add_inplace, optimizer updates). An op that saves a tensor for its backward rule notes this
  // count; backward() refuses to run the rule if it has moved since (see core/graph.h).
  std::uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t capacity_ = 0;  // of the buffer: at least bytes_, at most twice (rounded up)
  void* home_ = nullptr;  // the free lists this buffer returns to (storage.cpp)
  std::uint64_t version_ = 0;
};

// Statistics of the caching allocator (summed over threads), for benchmarks and tests.
struct AllocatorStats {
  std::size_t system_allocations = 0;  // buffers obtained from the system so far
  std::size_t cache_hits = 0;          // requests served from the free lists
  std::size_t cached_bytes = 0;        // bytes sitting in free lists now
};
AllocatorStats allocator_stats();
// Returns every cached buffer to the system.
void release_cached_memory();

}  // namespace uwaga
