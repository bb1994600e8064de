#pragma once
// What the programs do differently when `mpirun -np N` starts N copies of them: every copy
// loads the data and builds the run, process 0 alone prints and writes files, and a failure on
// any copy ends them all with its message.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "optim/gradient_reduction.h"
#include "optim/trainer.h"

namespace uwaga::apps {

// Runs `setup` on every process; when it throws a uwaga::Error on any, every process fails with
// the message of the lowest rank at fault ("process 1 of 2: cannot open …").
void on_every_process(optim::GradientReduction& processes, const std::function<void()>& setup);

// Fails on every process unless each one's `settings` (a JSON object: the run's configuration,
// its data's statistics, the trainer's flags) equal process 0's, naming the first setting that
// differs ("every process must run the same command on the same data").
void check_same_settings(optim::GradientReduction& processes, const nlohmann::json& settings);

// The settings every process of a training run must share: the run's configuration (JSON text),
// the trainer's flags and the size of the evaluation data.
nlohmann::json training_settings(const std::string& run_json, const optim::TrainerOptions& options,
                                 std::int64_t eval_items);

// "2 MPI processes × 1 thread; all-reduce 0.41 ms a step (0.83 MB), 2.1 % of the step", for the
// end of a run on several processes; "" on one.
std::string communication_summary(optim::GradientReduction& processes, std::int64_t steps,
                                  double seconds);

}  // namespace uwaga::apps
