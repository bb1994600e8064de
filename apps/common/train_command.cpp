#include "apps/common/train_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "apps/common/command_line.h"
#include "apps/common/processes.h"
#include "apps/common/run_summary.h"
#include "apps/common/svg_canvas.h"
#include "apps/common/training_plot.h"
#include "core/bf16_gemm.h"
#include "core/matmul_precision.h"
#include "optim/gradient_reduction.h"

namespace uwaga::apps {
namespace {

// --epochs, --batch-size and --grad-accum as the run configuration holds them.
struct RunLength {
  std::int64_t epochs = 0, batch_size = 0, grad_accum = 1;
};

RunLength run_length_of(const std::string& run_json) {
  const nlohmann::json run = nlohmann::json::parse(run_json);
  return {run.value("epochs", std::int64_t{0}), run.value("batch_size", std::int64_t{0}),
          run.value("grad_accum", std::int64_t{1})};
}

// --precision as the run configuration holds it (older runs: fp32), as core/matmul_precision.h
// names it.
MatmulPrecision precision_of(const std::string& run_json) {
  const nlohmann::json run = nlohmann::json::parse(run_json);
  return run.value("precision", std::string("fp32")) == "bf16" ? MatmulPrecision::bfloat16
                                                                : MatmulPrecision::float32;
}

// Why a bf16 run's products stay float32 here: gemm keeps them float32 where bf16_gemm would have
// to emulate bfloat16 through the float32 kernels (core/matmul_precision.h).
const char* why_float32() {
  const char* env = std::getenv("UWAGA_BF16_KERNEL");
  return env && std::strcmp(env, "reference") == 0 ? "UWAGA_BF16_KERNEL=reference asks for no "
                                                     "AVX512-BF16"
                                                   : "this CPU has no AVX512-BF16";
}

}  // namespace

int train_command(TrainProgram& program, int argc, char** argv) {
  const TrainModeText text = program.text();
  const char* name = text.program.c_str();
  cxxopts::Options o(text.program + " train", text.description);
  o.add_options()
      ("preset", text.presets, cxxopts::value<std::string>()->default_value(text.default_preset))
      ("out", "directory for checkpoint.safetensors and log.jsonl (required)", cxxopts::value<std::string>())
      ("resume", "continue from the checkpoint in --out")
      ("max-steps", "stop after this many optimizer steps in total (counting resumed ones)", cxxopts::value<std::int64_t>()->default_value("0"));
  o.add_options()
      ("attention", "fast (every head at once in the fused kernel) or reference (the formula step "
                    "by step: project, split into heads, attend, concatenate, W_O; slower, the "
                    "same numbers up to rounding)", cxxopts::value<std::string>()->default_value("fast"));
  program.add_flags(o);
  o.add_options()("h,help", "show this help");
  add_training_flags(o, text.examples, text.seeded, text.label_smoothing);
  add_micro_batch_flag(o, text.micro_batch, text.micro_batch_items.c_str());
  add_threads_option(o, "all cores");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "train");
  const TrainingOutput output = training_output(r);
  set_threads_from_option(r, name, true);

  // Under mpirun every process builds the same run; a failure on any of them ends them all.
  const std::unique_ptr<optim::GradientReduction> processes = optim::processes_of_this_run();
  const bool root = processes->rank() == 0;
  RunSettings settings;
  on_every_process(*processes, [&] { settings = program.set_up(r, output); });
  optim::TrainerOptions options = trainer_options(r, output, text.program);
  if (settings.parameters >= kOneReplicaParameters) options.parallel.threads = 1;
  if (!r.count("save-every")) options.save_every = settings.save_every;
  if (settings.micro_batch > 0 && r["micro-batch"].has_default())
    options.parallel.micro_batch = std::min(options.parallel.micro_batch, settings.micro_batch);
  const RunLength step = run_length_of(settings.run_json);
  if (step.grad_accum > 1) {  // each pass takes at most a replica's share of one --batch-size
    const std::int64_t replicas = std::int64_t{options.parallel.threads} * processes->size();
    const std::int64_t pass = (step.batch_size + replicas - 1) / replicas;
    options.parallel.micro_batch =
        options.parallel.micro_batch > 0 ? std::min(options.parallel.micro_batch, pass) : pass;
  }
  options.reduction = processes.get();
  nlohmann::json shared = training_settings(settings.run_json, options, settings.eval_items);
  shared["attention"] = r["attention"].as<std::string>();
  check_same_settings(*processes, shared);

  program.start(options);
  const MatmulPrecision precision = precision_of(settings.run_json);
  if (root) {
    program.print_summary(options.parallel);
    const RunSummary summary(text);
    if (step.grad_accum > 1)
      summary.line("accumulate", "the gradients of %lld batches of %lld %s a step (%lld %s)",
                   (long long)step.grad_accum, (long long)step.batch_size, text.examples.c_str(),
                   (long long)(step.grad_accum * step.batch_size), text.examples.c_str());
    if (options.eval_every > 1)
      summary.line("evaluate", "every %lld epochs and after the last",
                   static_cast<long long>(options.eval_every));
    if (options.save_every >= step.epochs && step.epochs > 1)
      summary.line("save", "the checkpoint after the last epoch only (--save-every N: more)");
    else if (options.save_every > 1)
      summary.line("save", "a checkpoint every %lld epochs and after the last",
                   static_cast<long long>(options.save_every));
    const bool bf16_kernel = std::strcmp(bf16_gemm_path(), "float32") != 0;
    if (precision == MatmulPrecision::bfloat16 && bf16_kernel)
      summary.line("precision", "bf16 matrix products (float32 sums, %s kernel); the weights, "
                   "AdamW, LayerNorm, softmax and the loss in float32", bf16_gemm_path());
    else if (precision == MatmulPrecision::bfloat16)
      std::printf("--precision bf16: %s; training in float32\n", why_float32());
    if (attention_path(r) == nn::AttentionPath::reference)
      summary.line("attention", "the reference path, as the formula reads "
                   "(nn/multi_head_attention.cpp)");
    std::fflush(stdout);
  }
  // Every product of the training and of its evaluations, on every thread, in the run's precision.
  const MatmulPrecisionScope matmul_precision_scope(precision);
  const optim::TrainSummary summary = program.fit();  // prints its own reason for stopping early
  if (summary.stopped_non_finite) return 1;
  if (summary.interrupted) return 130;
  if (!root) return 0;
  program.print_result(summary);
  if (std::string line = communication_summary(*processes, summary.steps, summary.seconds);
      !line.empty())
    std::printf("%s\n", line.c_str());
  print_run_files(output.out, program.next_commands(r, program_as_typed(name), output,
                                                    shell_quoted(output.checkpoint)));
  return 0;
}

void print_run_files(const std::string& run_dir, const std::vector<std::string>& next) {
  const std::string dir = run_directory(run_dir);
  std::string curves = dir + "/curves.svg";
  std::string svg;
  try {
    svg = training_plot_svg({read_training_log(dir)});
  } catch (const Error&) {
    curves.clear();  // nothing to draw yet; the run itself succeeded
  }
  if (!svg.empty()) {
    try {
      write_svg_file(curves, svg);
    } catch (const Error& e) {
      curves = std::string("not drawn: ") + e.what();  // a full disk: the checkpoint is saved
    }
  }
  std::printf("checkpoint: %s/checkpoint.safetensors\n", dir.c_str());
  std::printf("log:        %s/log.jsonl\n", dir.c_str());
  if (!curves.empty()) std::printf("curves:     %s\n", curves.c_str());
  std::printf("next:\n");
  for (const std::string& command : next) std::printf("  %s\n", command.c_str());
}

}  // namespace uwaga::apps
