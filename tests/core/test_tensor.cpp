#include <thread>
#include <omp.h>

#include <catch2/catch.hpp>

#include "core/uwaga.h"

using namespace uwaga;
using Catch::Contains;

TEST_CASE("creation fills shapes and values", "[core][tensor]") {
  Tensor z = Tensor::zeros({2, 3});
  REQUIRE(z.shape() == Shape{2, 3});
  REQUIRE(z.dtype() == DType::Float32);
  REQUIRE(z.numel() == 6);
  for (double v : z.to_vector()) REQUIRE(v == 0.0);
  Tensor o = Tensor::ones({4}, DType::Float64);
  REQUIRE(o.dtype() == DType::Float64);
  REQUIRE(o.at({3}) == 1.0);
  REQUIRE(Tensor::full({2, 2}, 2.5).at({1, 1}) == 2.5);
  REQUIRE(Tensor::arange(0, 5).to_vector() == std::vector<double>{0, 1, 2, 3, 4});
  REQUIRE(Tensor::arange(1, 2, 0.25, DType::Float64).to_vector() ==
          std::vector<double>{1, 1.25, 1.5, 1.75});
  Tensor f = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  REQUIRE(f.at({1, 0}) == 4.0);
  REQUIRE(f.size(-1) == 3);
  REQUIRE(Tensor::scalar(7).item() == 7.0);
  REQUIRE(Tensor::scalar(7).dim() == 0);
  Tensor idx = Tensor::from_indices({3, 1, 2}, {3});
  REQUIRE(idx.dtype() == DType::Int64);
  REQUIRE(idx.to_indices() == std::vector<std::int64_t>{3, 1, 2});
}

TEST_CASE("element access and conversions", "[core][tensor]") {
  Tensor t = Tensor::zeros({2, 2}, DType::Float64);
  t.set({0, 1}, 3.5);
  REQUIRE(t.at({0, 1}) == 3.5);
  REQUIRE(t.flat(1) == 3.5);
  Tensor f = t.to(DType::Float32);
  REQUIRE(f.dtype() == DType::Float32);
  REQUIRE(f.at({0, 1}) == 3.5);
  Tensor c = t.clone();
  c.set({0, 0}, 1);
  REQUIRE(t.at({0, 0}) == 0.0);  // a clone owns its storage
  REQUIRE_THROWS_WITH(t.at({2, 0}), Contains("index 2 is out of range for dim 0 of size 2"));
  REQUIRE_THROWS_WITH(t.at({0}), Contains("1 coordinates for a tensor of shape (2, 2)"));
  REQUIRE_THROWS_WITH(t.item(), Contains("has 4 elements, not 1"));
  REQUIRE_THROWS_WITH(t.data<float>(), Contains("dtype float64, requested float32"));
  REQUIRE_THROWS_WITH(Tensor::from_vector({1, 2, 3}, {2, 2}),
                      Contains("3 values do not fill shape (2, 2)"));
  REQUIRE_THROWS_WITH(Tensor::zeros({2, -1}), Contains("negative size"));
  REQUIRE_THROWS_WITH(Tensor().shape(), Contains("undefined tensor"));
}

TEST_CASE("printing shows shape, dtype and values, truncated when large", "[core][tensor]") {
  Tensor t = Tensor::from_vector({1, 2, 3, 4}, {2, 2});
  std::string s = t.to_string();
  REQUIRE_THAT(s, Contains("shape=(2, 2)"));
  REQUIRE_THAT(s, Contains("float32"));
  REQUIRE_THAT(s, Contains("[[1, 2],"));
  REQUIRE_THAT(s, Contains("[3, 4]]"));
  Tensor big = Tensor::arange(0, 5000);
  std::string b = big.to_string();
  REQUIRE_THAT(b, Contains("..."));
  REQUIRE_THAT(b, Contains("4999"));
  REQUIRE(b.size() < 200);
}

TEST_CASE("the same seed gives identical tensors, another seed different ones", "[core][random]") {
  Generator g1(42), g2(42), g3(43);
  Tensor a = Tensor::randn({100}, g1);
  Tensor b = Tensor::randn({100}, g2);
  Tensor c = Tensor::randn({100}, g3);
  REQUIRE(a.to_vector() == b.to_vector());
  REQUIRE(a.to_vector() != c.to_vector());
  // Restoring a generator's state replays the same numbers.
  Generator g(7);
  g.normal();
  auto state = g.state();
  double x = g.normal(), y = g.uniform();
  g.set_state(state);
  REQUIRE(g.normal() == x);
  REQUIRE(g.uniform() == y);
  // Sanity of the distributions: mean ~ 0, variance ~ 1; uniform inside its bounds.
  Generator big(1);
  Tensor n = Tensor::randn({20000}, big, DType::Float64);
  double mean = 0, sq = 0;
  for (double v : n.to_vector()) mean += v, sq += v * v;
  mean /= 20000;
  REQUIRE(std::abs(mean) < 0.03);
  REQUIRE(std::abs(sq / 20000 - 1) < 0.05);
  Tensor u = Tensor::uniform({1000}, big, -2, 3);
  for (double v : u.to_vector()) REQUIRE((v >= -2 && v < 3));
}

TEST_CASE("views share storage with their input, copies do not", "[core][tensor]") {
  Tensor t = Tensor::arange(0, 6);
  Tensor v = reshape(t, {2, 3});
  REQUIRE(v.shares_storage_with(t));
  Tensor d = t.detach();
  REQUIRE(d.shares_storage_with(t));
  v.set({1, 2}, 100);
  REQUIRE(t.at({5}) == 100.0);
  Tensor tr = transpose(v, 0, 1);
  REQUIRE_FALSE(tr.shares_storage_with(t));
}

TEST_CASE("the caching allocator reuses freed buffers", "[core][storage]") {
  { Tensor warm = Tensor::empty({12345}); }
  auto before = allocator_stats();
  for (int i = 0; i < 10; ++i) { Tensor t = Tensor::empty({12345}); }
  auto after = allocator_stats();
  REQUIRE(after.system_allocations == before.system_allocations);
  REQUIRE(after.cache_hits >= before.cache_hits + 10);
}

TEST_CASE("the caching allocator serves a request from a free buffer of at most twice its size",
          "[core][storage]") {
  // Sizes chosen apart from every other test's, on a thread of its own: a fresh cache.
  std::thread([] {
    { Tensor big = Tensor::empty({40000}); }  // 160,000 bytes, now free
    auto before = allocator_stats();
    { Tensor smaller = Tensor::empty({30000}); }  // 120,000: fits in 160,000 <= 2 × 120,000
    auto after = allocator_stats();
    CHECK(after.system_allocations == before.system_allocations);
    CHECK(after.cache_hits == before.cache_hits + 1);
    before = after;
    { Tensor tiny = Tensor::empty({10000}); }  // 40,000: the 160,000 buffer is too big for it
    after = allocator_stats();
    CHECK(after.system_allocations == before.system_allocations + 1);
  }).join();
}

TEST_CASE("steps whose shapes vary share buffers instead of keeping a set per shape",
          "[core][storage]") {
  // Batches of sentences of 5 … 14 words, the tensors of a step all alive at once. A cache of
  // one set of buffers per length would hold the bytes of all ten steps, 95 words' worth; with
  // buffers shared across sizes within a factor 2 it holds a few of the largest step's (14 words'
  // worth each): 47 words' worth here.
  const std::size_t per_word = 64 * (128 + 256 + 335) * sizeof(float);
  const std::size_t cached_before = allocator_stats().cached_bytes;
  std::size_t new_buffers_after_warm_up = 0;
  std::thread([&] {
    auto step = [](std::int64_t words) {
      Tensor a = Tensor::empty({64, words, 128}), b = Tensor::empty({64, words, 256});
      Tensor c = Tensor::empty({64 * words, 335});
    };
    for (std::int64_t words = 5; words <= 14; ++words) step(words);
    const auto before = allocator_stats();
    for (int pass = 0; pass < 3; ++pass)
      for (std::int64_t words = 5; words <= 14; ++words) step(words);
    new_buffers_after_warm_up = allocator_stats().system_allocations - before.system_allocations;
  }).join();
  CHECK(new_buffers_after_warm_up == 0);
  const std::size_t cached = allocator_stats().cached_bytes - cached_before;
  CHECK(cached >= 14 * per_word);
  CHECK(cached <= 4 * 14 * per_word);
}

TEST_CASE("buffers freed on another thread return to the allocating thread's cache",
          "[core][storage]") {
  // A buffer made on a worker thread and dropped on this one, step after step (as a replica's
  // gradients are): the worker's next request must reuse it, not ask the system again.
  auto step = [] {
    Tensor made;
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 1) made = Tensor::empty({54321});
    }
    return made;  // freed here, on this thread
  };
  for (int i = 0; i < 3; ++i) step();
  const auto before = allocator_stats();
  for (int i = 0; i < 20; ++i) step();
  REQUIRE(allocator_stats().system_allocations == before.system_allocations);
}

TEST_CASE("Generator::below(0) is an error, not a division by zero", "[core][random]") {
  Generator g(0);
  REQUIRE_THROWS_WITH(g.below(0), Contains("below") && Contains("at least 1"));
  REQUIRE(g.below(1) == 0);
  for (int i = 0; i < 100; ++i) REQUIRE(g.below(3) < 3);
}

TEST_CASE("shapes whose element count or byte size overflows are errors naming the shape",
          "[core][tensor]") {
  const std::int64_t big = std::int64_t(1) << 32;
  // (2³², 2³²) has 2⁶⁴ elements: the product wraps to 0 in int64.
  REQUIRE_THROWS_WITH(Tensor::zeros({big, big}),
                      Contains("(4294967296, 4294967296)") && Contains("int64"));
  REQUIRE_THROWS_WITH(numel({big, big, 3}), Contains("(4294967296, 4294967296, 3)"));
  // 2⁶¹ float64 elements fit in int64, but their 2⁶⁴ bytes wrap to 0 in size_t.
  REQUIRE_THROWS_WITH(Tensor::empty({std::int64_t(1) << 61}, DType::Float64),
                      Contains("(2305843009213693952,)") && Contains("bytes"));
  REQUIRE_THROWS_WITH(Tensor::empty({3, -2}), Contains("negative size") && Contains("(3, -2)"));
  // A zero size makes any shape empty, however large its other sizes.
  REQUIRE(numel({big, big, 0}) == 0);
  REQUIRE(numel({0, big, big}) == 0);
  REQUIRE(Tensor::zeros({big, 0, big}).numel() == 0);
}

TEST_CASE("arange with more elements than int64 counts is an error, not an empty tensor",
          "[core][tensor]") {
  REQUIRE_THROWS_WITH(Tensor::arange(0, 1e30), Contains("arange") && Contains("1e+30"));
  REQUIRE_THROWS_WITH(Tensor::arange(0, 1, 1e-300), Contains("arange"));
  REQUIRE(Tensor::arange(5, 0).numel() == 0);   // an empty range stays empty
  REQUIRE(Tensor::arange(0, -1e30).numel() == 0);
}
