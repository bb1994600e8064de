#include "apps/common/training_flags.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "apps/common/printable_text.h"
#include "apps/common/thread_policy.h"
#include "core/threads.h"

namespace uwaga::apps {

TrainingOutput training_output(const cxxopts::ParseResult& r) {
  if (!r.count("out")) fail("train: --out DIR is required (checkpoints and the log go there)");
  TrainingOutput o;
  o.out = r["out"].as<std::string>();
  if (o.out.empty()) fail("train: --out must name a directory, got ''");
  require_utf8_path("train: --out", o.out);
  o.checkpoint = o.out + "/checkpoint.safetensors";
  o.resume = r.count("resume") > 0;
  // A new run would replace the checkpoint (and add to the log) of the run already there.
  if (!o.resume && std::filesystem::exists(o.checkpoint))
    fail("train: ", o.out, " already holds a run (", o.checkpoint,
         "); continue it with --resume, or train into another --out");
  return o;
}

optim::TrainerOptions trainer_options(const cxxopts::ParseResult& r, const TrainingOutput& output,
                                      const std::string& program) {
  optim::TrainerOptions to;
  to.parallel = replica_options(r);
  to.max_steps = r["max-steps"].as<std::int64_t>();
  if (to.max_steps < 0) fail("train: --max-steps must be >= 0 (0: no limit), got ", to.max_steps);
  to.out_dir = output.out;
  to.resume = output.resume;
  to.log_every = r["log-every"].as<std::int64_t>();
  if (to.log_every < 1) fail("train: --log-every must be at least 1, got ", to.log_every);
  to.eval_every = r["eval-every"].as<std::int64_t>();
  if (to.eval_every < 1) fail("train: --eval-every must be at least 1, got ", to.eval_every);
  if (r.count("save-every")) {
    to.save_every = r["save-every"].as<std::int64_t>();
    if (to.save_every < 1) fail("train: --save-every must be at least 1, got ", to.save_every);
  }
  // What the user needs to type to go on: the run directory, and where the data and threads
  // came from when they were not the defaults (the checkpoint holds everything else).
  to.resume_command = program_as_typed(program.c_str()) + " train --out " + shell_quoted(output.out);
  if (r.count("data-dir"))
    to.resume_command += " --data-dir " + shell_quoted(r["data-dir"].as<std::string>());
  if (r.count("threads"))
    to.resume_command += " --threads " + std::to_string(r["threads"].as<int>());
  if (r.count("eval-every") && !r["eval-every"].has_default())
    to.resume_command += " --eval-every " + std::to_string(to.eval_every);
  if (r.count("save-every"))
    to.resume_command += " --save-every " + std::to_string(to.save_every);
  to.resume_command += " --resume";
  return to;
}

nn::AttentionPath attention_path(const cxxopts::ParseResult& r) {
  const std::string path = r["attention"].as<std::string>();
  if (path == "fast") return nn::AttentionPath::fast;
  if (path == "reference") return nn::AttentionPath::reference;
  fail("train: --attention must be fast or reference, got '", path, "'");
}

void add_micro_batch_flag(cxxopts::Options& o, std::int64_t default_value, const char* items) {
  o.add_options()("micro-batch",
                  std::string("most ") + items + " per forward/backward pass: each thread trains "
                  "its own replica of the model on its share of a batch, this many " + items +
                  " at a time (0: the whole share)",
                  cxxopts::value<std::int64_t>()->default_value(std::to_string(default_value)));
}

void add_training_flags(cxxopts::Options& o, const std::string& examples,
                        const std::string& seeded, bool label_smoothing) {
  using cxxopts::value;
  o.add_options()
      ("epochs", "training epochs", value<std::int64_t>())
      ("batch-size", examples + " per forward/backward pass (per step, without --grad-accum)",
       value<std::int64_t>())
      ("grad-accum", "gradient accumulation: each optimizer step sums the gradients of N "
                     "batches of --batch-size, a batch N times as large in the memory of one",
       value<std::int64_t>())
      ("lr", "peak learning rate", value<double>())
      ("min-lr", "learning rate at the end of the cosine decay", value<double>())
      ("weight-decay", "AdamW weight decay (not on biases, norms, embeddings)", value<double>())
      ("warmup", "steps of linear learning-rate warm-up", value<std::int64_t>());
  if (label_smoothing) o.add_options()("label-smoothing", "label smoothing in [0, 1)", value<double>());
  o.add_options()
      ("clip", "clip the global gradient norm to this (0: off)", value<double>())
      ("precision", "fp32, or bf16: the matrix products in bfloat16 with float32 sums, as "
                    "PyTorch's CPU autocast; weights, optimizer, LayerNorm, softmax and loss stay "
                    "float32 (a CPU without AVX512-BF16 trains in fp32, saying so)",
       value<std::string>())
      ("seed", "seed for " + seeded, value<std::uint64_t>())
      ("log-every", "steps between log lines", value<std::int64_t>()->default_value("50"))
      ("eval-every", "epochs between evaluations (the last epoch is always evaluated)",
       value<std::int64_t>()->default_value("1"))
      ("save-every", "epochs between checkpoints (the last epoch, Ctrl-C and --max-steps always "
                     "save one; default 1, uwaga-gpt's gpt2-shakespeare demo only the last)",
       value<std::int64_t>());
}

void add_threads_option(cxxopts::Options& o, const char* fallback) {
  o.add_options()("threads", std::string("threads for uwaga and OpenBLAS (default: "
                                         "UWAGA_NUM_THREADS, else ") + fallback + ")",
                  cxxopts::value<int>());
}

void set_threads_from_option(const cxxopts::ParseResult& r, const char* program,
                             bool all_cores_by_default) {
  if (r.count("threads")) {
    const int n = r["threads"].as<int>();
    if (n < 1) fail("--threads must be at least 1, got ", n);
    warn_if_more_threads_than_cores(program, n);
    set_num_threads(n);
  } else if (std::getenv("UWAGA_NUM_THREADS") || all_cores_by_default) {
    init_threads();
  } else {
    set_num_threads(1);
  }
}

optim::DataParallelOptions replica_options(const cxxopts::ParseResult& r) {
  const std::int64_t micro_batch = r["micro-batch"].as<std::int64_t>();
  if (micro_batch < 0) fail("train: --micro-batch must be >= 0 (0: no limit), got ", micro_batch);
  // Several processes on one machine (mpirun -np N) share its cores unless told otherwise.
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (local && !r.count("threads") && !std::getenv("UWAGA_NUM_THREADS") && std::atoi(local) > 1)
    set_num_threads(std::max(1, num_threads() / std::atoi(local)));
  return {num_threads(), micro_batch};
}

}  // namespace uwaga::apps
