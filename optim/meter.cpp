#include "optim/meter.h"

#include <nlohmann/json.hpp>

#include "core/json_fields.h"

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

nlohmann::json Meter::to_json() const { return fields_to_json(*this); }

Meter Meter::from_json(const nlohmann::json& j) {
  Meter m;
  fields_from_json(j, m, "the epoch's sums");
  return m;
}

}  // namespace uwaga::optim
