#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/uwaga.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;

TEST_CASE("BackwardTimer adds up the time of each op's backward rule, only while it lives",
          "[core][backward_timer]") {
  auto run = [] {
    Tensor x = testing::leaf({4, 3}, 1);
    sum(exp(x) * x).backward();
  };
  std::vector<std::string> ops;
  {
    BackwardTimer timer;
    REQUIRE(timer.times().empty());
    run();
    for (auto& [op, seconds] : timer.times()) {
      ops.push_back(op);
      REQUIRE(seconds >= 0);
    }
  }
  REQUIRE_THAT(ops, Catch::Matchers::VectorContains(std::string("exp")));
  REQUIRE_THAT(ops, Catch::Matchers::VectorContains(std::string("mul")));
  REQUIRE_THAT(ops, Catch::Matchers::VectorContains(std::string("sum")));
  REQUIRE_THAT(ops, Catch::Matchers::VectorContains(std::string("engine")));

  BackwardTimer later;
  run();
  REQUIRE(later.times().size() == ops.size());  // its own totals, from its own start
}

// An observer that counts what the engine tells it.
struct CountingObserver : BackwardObserver {
  int started = 0, returned = 0, passed_on = 0;
  void rule_started(const Node&) override { ++started; }
  void rule_returned(const Node&) override { ++returned; }
  void gradients_passed_on(const Node&) override { ++passed_on; }
};

TEST_CASE("the engine tells its observer about every rule it runs, and nothing once removed",
          "[core][backward_timer]") {
  CountingObserver counts;
  BackwardObserver* before = set_backward_observer(&counts);
  Tensor x = testing::leaf({4, 3}, 1);
  sum(exp(x) * x).backward();  // three nodes: exp, mul, sum
  REQUIRE(counts.started == 3);
  REQUIRE(counts.returned == 3);
  REQUIRE(counts.passed_on == 3);
  REQUIRE(set_backward_observer(before) == &counts);
  sum(exp(x) * x).backward();
  REQUIRE(counts.started == 3);
}
