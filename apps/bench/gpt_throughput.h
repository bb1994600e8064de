#pragma once
// uwaga-gpt's training step for apps/bench/gpt_speed.sh, measured against PyTorch
// (apps/bench/gpt_torch.py) on the same model, batch and optimiser:
//   uwaga-bench --mode gpt-config --model shakespeare-tiny > FILE   the preset's model and
//                                                                  optimisation fields, for
//                                                                  gpt_torch.py --config FILE
//   uwaga-bench --mode gpt --model shakespeare-tiny                 training steps as
//                                                                  `uwaga-gpt train` runs them;
//                                                                  tokens/s
// A token is one predicted character: a step of B windows of T characters trains B·T of them.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/bench/bench_timing.h"

namespace uwaga::apps {

nlohmann::json gpt_bench_config(const std::string& preset);
nlohmann::json bench_gpt(const std::string& preset, std::int64_t micro_batch,
                         const BenchOptions& o);

}  // namespace uwaga::apps
