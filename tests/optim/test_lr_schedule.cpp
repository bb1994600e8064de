// Learning-rate schedules: the warm-up + cosine schedule against the formula PyTorch-side
// (tests/golden/schedule_warmup_cosine.safetensors), the others by hand.
#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "optim/lr_schedule.h"
#include "tests/support/golden.h"

using namespace uwaga;
using namespace uwaga::optim;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("WarmupCosineLr matches the golden schedule", "[optim]") {
  Golden g = load_golden("schedule_warmup_cosine");
  REQUIRE(g.metadata("schedule") == "warmup_cosine");
  const std::int64_t warmup = g.metadata_int("warmup_steps"), total = g.metadata_int("total_steps");
  WarmupCosineLr schedule(g.metadata_double("base_lr"), warmup, total, g.metadata_double("min_lr"));
  const Tensor& expected = g.get("lr");
  REQUIRE(expected.numel() == total);
  std::vector<double> lr;
  for (std::int64_t t = 0; t < total; ++t) lr.push_back(schedule.lr(t));
  check_close("warmup-cosine lr, steps 0.." + std::to_string(total - 1),
              Tensor::from_vector(lr, {total}, DType::Float64), expected, 0, 1e-13);
}

TEST_CASE("WarmupCosineLr's shape: up linearly, peak, down to the floor, then flat", "[optim]") {
  WarmupCosineLr s(1e-3, 10, 50, 1e-5);
  CHECK(s.lr(0) == Approx(1e-4));
  CHECK(s.lr(9) == Approx(1e-3));   // the last warm-up step reaches base...
  CHECK(s.lr(10) == Approx(1e-3));  // ...and the cosine starts there
  CHECK(s.lr(30) == Approx(1e-5 + (1e-3 - 1e-5) * 0.5));  // half way down
  for (std::int64_t t = 11; t < 50; ++t) CHECK(s.lr(t) < s.lr(t - 1));
  CHECK(s.lr(50) == 1e-5);
  CHECK(s.lr(1000) == 1e-5);
  WarmupCosineLr no_warmup(0.1, 0, 10, 0.0);
  CHECK(no_warmup.lr(0) == 0.1);
  CHECK(no_warmup.lr(10) == 0.0);
  CHECK_THAT(s.describe(), Contains("warmup-cosine") && Contains("0.001"));
}

TEST_CASE("ConstantLr and StepLr", "[optim]") {
  ConstantLr constant(0.05);
  CHECK(constant.lr(0) == 0.05);
  CHECK(constant.lr(123456) == 0.05);
  CHECK_THAT(constant.describe(), Contains("constant") && Contains("0.05"));

  StepLr step(0.1, 3, 0.5);
  const std::vector<double> expected = {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025};
  for (std::int64_t t = 0; t < 7; ++t) CHECK(step.lr(t) == Approx(expected[t]));
  CHECK_THAT(step.describe(), Contains("0.5") && Contains("every 3 steps"));
}

TEST_CASE("schedules reject bad arguments, naming the schedule and the value", "[optim]") {
  CHECK_THROWS_WITH(ConstantLr(-1.0), Contains("ConstantLr: base") && Contains("-1"));
  CHECK_THROWS_WITH(StepLr(0.1, 0, 0.5), Contains("StepLr: step_size must be >= 1, got 0"));
  CHECK_THROWS_WITH(StepLr(0.1, 3, 0.0), Contains("StepLr: gamma") && Contains("got 0"));
  CHECK_THROWS_WITH(WarmupCosineLr(1e-3, -1, 50, 0), Contains("WarmupCosineLr: warmup") &&
                                                         Contains("got -1"));
  CHECK_THROWS_WITH(WarmupCosineLr(1e-3, 10, 10, 0),
                    Contains("WarmupCosineLr: total (10 steps) must be greater than warmup (10"));
  CHECK_THROWS_WITH(WarmupCosineLr(1e-3, 10, 50, 1e-2),
                    Contains("WarmupCosineLr: floor 0.01 is above base 0.001"));
  CHECK_THROWS_WITH(WarmupCosineLr(1e-3, 10, 50, -1e-5), Contains("WarmupCosineLr: floor"));
  CHECK_THROWS_WITH(WarmupCosineLr(1e-3, 10, 50, 0).lr(-1),
                    Contains("WarmupCosineLr: steps count from 0, got step -1"));
}
