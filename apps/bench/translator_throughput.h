#pragma once
// The translator's training step for apps/bench/run.sh, measured against PyTorch
// (apps/bench/translate_torch.py) on the same batches: uwaga-translate's default preset, the
// first `count` batches of its first epoch, cycled.
//   uwaga-bench --mode translate-batches > FILE   those batches (word ids, padded) and the
//                                                 preset's model and optimisation fields, for
//                                                 PyTorch
//   uwaga-bench --mode translate                  training steps as uwaga-translate runs them:
//                                                 DataParallel::gradient (replicas on the
//                                                 threads, label-smoothed cross-entropy),
//                                                 clipping, AdamW; sentences/s and words/s
//   uwaga-bench --mode translate-eval             teacher-forced forward passes, eval mode
#include <cstdint>
#include <nlohmann/json.hpp>

#include "apps/bench/bench_timing.h"

namespace uwaga::apps {

nlohmann::json translator_batches(std::int64_t count);
nlohmann::json bench_translator(std::int64_t count, std::int64_t micro_batch,
                                const BenchOptions& o, bool train);

}  // namespace uwaga::apps
