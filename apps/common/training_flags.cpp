#include "apps/common/training_flags.h"

#include <cstdio>

#include "core/threads.h"

namespace uwaga::apps {

TrainingOutput training_output(const cxxopts::ParseResult& r) {
  if (!r.count("out")) fail("train: --out DIR is required (checkpoints and the log go there)");
  TrainingOutput o;
  o.out = r["out"].as<std::string>();
  o.checkpoint = o.out + "/checkpoint.safetensors";
  o.resume = r.count("resume") > 0;
  return o;
}

optim::TrainerOptions trainer_options(const cxxopts::ParseResult& r, const TrainingOutput& output,
                                      std::int64_t epochs, double clip_norm,
                                      const std::string& program) {
  optim::TrainerOptions to;
  to.epochs = epochs;
  to.max_steps = r["max-steps"].as<std::int64_t>();
  to.clip_norm = clip_norm;
  to.out_dir = output.out;
  to.resume = output.resume;
  to.log_every = r["log-every"].as<std::int64_t>();
  to.resume_command = program + " train --out " + output.out + " --resume";
  return to;
}

void add_micro_batch_flag(cxxopts::Options& o, std::int64_t default_value, const char* items) {
  o.add_options()("micro-batch",
                  std::string("most ") + items + " per forward/backward pass: each thread trains "
                  "its own replica of the model on its share of a batch, this many " + items +
                  " at a time (0: the whole share)",
                  cxxopts::value<std::int64_t>()->default_value(std::to_string(default_value)));
}

optim::DataParallelOptions replica_options(const cxxopts::ParseResult& r, const char* items) {
  const std::int64_t micro_batch = r["micro-batch"].as<std::int64_t>();
  if (micro_batch < 0) fail("train: --micro-batch must be >= 0 (0: no limit), got ", micro_batch);
  std::printf("  threads   %d, each training a replica of the model on its share of a batch, %s\n",
              num_threads(),
              micro_batch ? ("at most " + std::to_string(micro_batch) + " " + items + " at a time").c_str()
                          : "all of it at once");
  std::fflush(stdout);
  return {num_threads(), micro_batch};
}

}  // namespace uwaga::apps
