#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/linear.h"
#include "optim/adam.h"
#include "optim/ema.h"
#include "optim/sgd.h"

using namespace uwaga;
using namespace uwaga::optim;
using Catch::Contains;

TEST_CASE("ema: the average follows θ̄ ← d θ̄ + (1 − d) θ after each step", "[optim][ema]") {
  Generator gen(1);
  nn::Linear model({.in = 3, .out = 2}, gen);
  model.to(DType::Float64);
  Sgd sgd(make_param_groups(model, 0.0), {0.1});
  WithEma ema(sgd, 0.9);
  std::map<std::string, std::vector<double>> expected;
  for (auto& [name, p] : model.named_parameters()) expected[name] = p.to_vector();
  for (int step = 0; step < 3; ++step) {
    ema.zero_grad();
    Tensor x = Tensor::randn({4, 3}, gen, DType::Float64);
    sum(model.forward(x) * model.forward(x)).backward();
    ema.step();
    for (auto& [name, p] : model.named_parameters()) {
      std::vector<double> v = p.to_vector();
      for (std::size_t i = 0; i < v.size(); ++i)
        expected[name][i] = 0.9 * expected[name][i] + 0.1 * v[i];
    }
  }
  REQUIRE(ema.steps() == 3);
  const auto averages = ema.averages();
  for (auto& [name, p] : model.named_parameters()) {
    const std::vector<double> got = averages.at(name).to_vector();
    for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == Approx(expected[name][i]));
  }
  // The state carries the average and the inner optimizer's; loading restores both.
  const auto state = ema.state();
  REQUIRE(state.count("weight.ema") == 1);
  Sgd sgd2(make_param_groups(model, 0.0), {0.1});
  WithEma ema2(sgd2, 0.9);
  ema2.load_state(state);
  REQUIRE(ema2.averages().at("weight").to_vector() == averages.at("weight").to_vector());
  // Evaluation with the averaged weights, then back.
  const std::vector<double> own = model.weight.to_vector();
  {
    AveragedWeights swap(model, averages);
    REQUIRE(model.weight.to_vector() == averages.at("weight").to_vector());
  }
  REQUIRE(model.weight.to_vector() == own);
  REQUIRE_THROWS_WITH(WithEma(sgd, 1.0), Contains("decay must be in [0, 1)"));
}
