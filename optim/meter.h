#pragma once
// Meter: running sums over a window of training steps — a log interval, or an epoch — for the
// means the log and the progress bar show.
#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "optim/data_parallel.h"

namespace uwaga::optim {

struct Meter {
  std::int64_t steps = 0, items = 0, correct = 0, counted = 0;  // counted: items with `correct`
  double loss = 0, grad_norm = 0, seconds = 0;

  void add(const StepResult& r, double norm, double step_seconds);
  double mean_loss() const { return loss / static_cast<double>(steps); }
  double mean_grad_norm() const { return grad_norm / static_cast<double>(steps); }
  bool has_accuracy() const { return counted > 0; }
  double accuracy() const { return static_cast<double>(correct) / static_cast<double>(counted); }
  double items_per_second() const { return seconds > 0 ? static_cast<double>(items) / seconds : 0; }

  // Saved with a checkpoint, so an epoch's train loss and accuracy still cover all its steps
  // when the run is resumed in the middle of it. from_json fails naming a field that is missing
  // or not a number of its type.
  nlohmann::json to_json() const;
  static Meter from_json(const nlohmann::json& j);

  // The JSON fields (core/json_fields.h).
  template <class Field>
  static void fields(Field&& field) {
    field("steps", &Meter::steps);
    field("items", &Meter::items);
    field("correct", &Meter::correct);
    field("counted", &Meter::counted);
    field("loss", &Meter::loss);
    field("grad_norm", &Meter::grad_norm);
    field("seconds", &Meter::seconds);
  }
};

}  // namespace uwaga::optim
