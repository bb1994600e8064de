#include <omp.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "core/threads.h"

using namespace uwaga;

namespace {

// Runs parallel_for over n items and returns, for each item, how often it was visited and by
// which OpenMP thread (the last one).
// (Catch2's assertions are not thread-safe: the body only records, the test checks afterwards.)
struct Visits {
  std::vector<int> count, thread;
  bool bad_range = false;
};
Visits visit(std::int64_t n, bool worth_forking) {
  Visits v{std::vector<int>(n, 0), std::vector<int>(n, -1)};
  parallel_for(n, worth_forking, [&](std::int64_t begin, std::int64_t end) {
    if (begin < 0 || begin >= end || end > n) {
#pragma omp atomic write
      v.bad_range = true;
      return;
    }
    for (std::int64_t i = begin; i < end; ++i) {
      ++v.count[i];
      v.thread[i] = omp_get_thread_num();
    }
  });
  return v;
}

}  // namespace

TEST_CASE("parallel_for visits every index once, forking only when asked and allowed") {
  init_threads();
  const int saved = num_threads();
  set_num_threads(2);
  for (std::int64_t n : {0, 1, 2, 3, 7, 1000}) {
    for (bool worth : {false, true}) {
      const Visits v = visit(n, worth);
      REQUIRE_FALSE(v.bad_range);
      for (std::int64_t i = 0; i < n; ++i) REQUIRE(v.count[i] == 1);
      // Forked: the two threads take the two halves (when the runtime grants two threads).
      if (worth && n >= 2 && v.thread[n - 1] == 1) {
        CHECK(v.thread[0] == 0);
        CHECK(v.thread[n / 2] == 1);
      }
      if (!worth)
        for (std::int64_t i = 0; i < n; ++i) REQUIRE(v.thread[i] == 0);
    }
  }

  // Inside a parallel region (a DataParallel replica) the loop stays on the calling thread,
  // which keeps its own thread number, whatever the loop is worth.
  std::vector<Visits> inner(2);
#pragma omp parallel num_threads(2)
  {
    const int t = omp_get_thread_num();
    if (t < 2) inner[t] = visit(100, true);
  }
  for (int t = 0; t < 2; ++t) {
    if (inner[t].count.empty()) continue;  // the runtime granted one thread
    REQUIRE_FALSE(inner[t].bad_range);
    for (std::int64_t i = 0; i < 100; ++i) {
      REQUIRE(inner[t].count[i] == 1);
      REQUIRE(inner[t].thread[i] == t);
    }
  }

  // One thread: never forks.
  set_num_threads(1);
  const Visits one = visit(1000, true);
  for (std::int64_t i = 0; i < 1000; ++i) REQUIRE(one.thread[i] == 0);
  set_num_threads(saved);
}
