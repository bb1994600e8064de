#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/uwaga.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;

namespace {

const OpTimes* find(const std::vector<OpTimes>& table, const std::string& op) {
  for (const OpTimes& t : table)
    if (t.op == op) return &t;
  return nullptr;
}

}  // namespace

TEST_CASE("OpTimer times each op's forward and backward, counts its calls, only while it lives",
          "[core][op_timer]") {
  auto run = [] {
    Tensor x = testing::leaf({4, 3}, 1);
    forward_begins();
    sum(exp(x) * x).backward();
  };
  std::vector<OpTimes> table;
  {
    OpTimer timer;
    REQUIRE(timer.table().empty());
    run();
    run();
    table = timer.table();
  }
  for (const char* op : {"exp", "mul", "sum"}) {
    const OpTimes* t = find(table, op);
    INFO(op);
    REQUIRE(t != nullptr);
    CHECK(t->calls == 2);
    CHECK(t->forward_s >= 0);
    CHECK(t->backward_s >= 0);
    CHECK(t->forward_flops == 0);
  }
  const OpTimes* mul = find(table, "mul");
  CHECK(mul->forward_bytes == 2 * (12 + 12 + 12) * 8.0);  // two calls: a, b and the output, float64
  const OpTimes* engine = find(table, "engine");
  REQUIRE(engine != nullptr);
  CHECK(engine->calls == 0);

  OpTimer later;
  run();
  REQUIRE(find(later.table(), "exp")->calls == 1);  // its own totals, from its own start
}

TEST_CASE("OpTimer counts the products' floating-point operations", "[core][op_timer]") {
  OpTimer timer;
  Tensor x = testing::leaf({5, 7}, 1), w = testing::leaf({3, 7}, 2), b = testing::leaf({3}, 3);
  forward_begins();
  Tensor y = linear(x, w, b);          // (5, 3) from K = 7: 2·15·7
  Tensor z = matmul(y, testing::leaf({3, 4}, 4));  // (5, 4) from K = 3: 2·20·3
  sum(z).backward();
  const std::vector<OpTimes> table = timer.table();
  CHECK(find(table, "linear")->forward_flops == 2.0 * 15 * 7);
  CHECK(find(table, "matmul")->forward_flops == 2.0 * 20 * 3);
}

// An observer that counts what the engine tells it.
struct CountingObserver : BackwardObserver {
  int started = 0, returned = 0, passed_on = 0;
  void rule_started(const Node&) override { ++started; }
  void rule_returned(const Node&) override { ++returned; }
  void gradients_passed_on(const Node&) override { ++passed_on; }
};

TEST_CASE("the engine tells its observer about every rule it runs, and nothing once removed",
          "[core][op_timer]") {
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

// An observer that counts what the graph tells it.
struct RecordCounter : RecordObserver {
  int began = 0, recorded_nodes = 0;
  void forward_began() override { ++began; }
  void recorded(const Node&) override { ++recorded_nodes; }
};

TEST_CASE("recording tells its observer about every node, and nothing without a gradient",
          "[core][op_timer]") {
  RecordCounter counts;
  RecordObserver* before = set_record_observer(&counts);
  Tensor x = testing::leaf({4, 3}, 1);
  forward_begins();
  Tensor y = sum(exp(x) * x);  // three nodes
  {
    NoGradGuard no_grad;
    Tensor z = exp(x);  // none
  }
  REQUIRE(counts.began == 1);
  REQUIRE(counts.recorded_nodes == 3);
  REQUIRE(set_record_observer(before) == &counts);
  forward_begins();
  REQUIRE(counts.began == 1);
}
