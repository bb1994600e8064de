#include "apps/common/training_flags.h"

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

}  // namespace uwaga::apps
