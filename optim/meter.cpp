#include "optim/meter.h"

#include <nlohmann/json.hpp>

namespace uwaga::optim {

void Meter::add(const StepResult& r, double norm, double step_seconds) {
  ++steps;
  loss += r.loss;
  grad_norm += norm;
  seconds += step_seconds;
  items += r.items;
  if (r.correct >= 0) {
    correct += r.correct;
    counted += r.items;
  }
}

nlohmann::json Meter::to_json() const {
  return {{"steps", steps},     {"items", items}, {"correct", correct},    {"counted", counted},
          {"loss", loss},       {"grad_norm", grad_norm}, {"seconds", seconds}};
}

Meter Meter::from_json(const nlohmann::json& j) {
  Meter m;
  m.steps = j.at("steps");
  m.items = j.at("items");
  m.correct = j.at("correct");
  m.counted = j.at("counted");
  m.loss = j.at("loss");
  m.grad_norm = j.at("grad_norm");
  m.seconds = j.at("seconds");
  return m;
}

}  // namespace uwaga::optim
