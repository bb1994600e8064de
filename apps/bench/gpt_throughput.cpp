#include "apps/bench/gpt_throughput.h"

#include "apps/gpt/gpt_run_config.h"
#include "apps/gpt/gpt_training.h"
#include "core/uwaga.h"
#include "data/text/char_corpus.h"
#include "nn/cross_entropy.h"
#include "nn/gpt.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/data_parallel.h"

namespace uwaga::apps {

using nlohmann::json;

namespace {

// The distinct characters of tinyshakespeare's training text: the presets' vocabulary.
constexpr std::int64_t kShakespeareVocab = 65;

GptRunConfig bench_run(const std::string& preset) {
  GptRunConfig run = gpt_preset(preset);
  run.model.vocab = kShakespeareVocab;
  run.validate();
  return run;
}

// A text of random characters to cut windows from: the time of a step does not depend on which
// characters it reads, and no file is needed.
std::vector<std::int64_t> random_text(std::int64_t length, std::int64_t vocab, Generator& gen) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(length));
  for (auto& id : ids) id = static_cast<std::int64_t>(gen.below(static_cast<std::uint64_t>(vocab)));
  return ids;
}

}  // namespace

json gpt_bench_config(const std::string& preset) {
  const GptRunConfig run = bench_run(preset);
  const nn::GptConfig& m = run.model;
  const optim::AdamOptions adam = gpt_adam_options(run);
  return {{"preset", preset},
          {"vocab", m.vocab},
          {"context", m.context},
          {"dim", m.dim},
          {"layers", m.layers},
          {"heads", m.heads},
          {"mlp_dim", m.mlp_dim},
          {"dropout", m.dropout},
          {"tie_weights", m.tie_weights},
          {"batch_size", run.batch_size},
          {"lr", adam.lr},
          {"betas", {adam.beta1, adam.beta2}},
          {"eps", adam.eps},
          {"weight_decay", run.weight_decay},
          {"clip_norm", run.clip_norm},
          {"label_smoothing", run.label_smoothing},
          {"seed", run.seed}};
}

// What the Trainer does each step of `uwaga-gpt train` (optim/trainer.cpp, Run::train_step):
// the next batch of random windows, the gradient on one replica per thread in micro-batches
// (with fresh dropout seeds), clipping, the AdamW update. The learning-rate schedule is left
// out here and in gpt_torch.py: setting a number costs nothing measurable.
json bench_gpt(const std::string& preset, std::int64_t micro_batch, const BenchOptions& o) {
  const long rss_before_model = peak_rss_kb();
  const GptRunConfig run = bench_run(preset);
  Generator gen(run.seed);
  nn::Gpt model(run.model, gen);
  model.train();
  CharWindows windows(random_text(200000, run.model.vocab, gen), run.batch_size,
                      run.model.context, run.steps_per_epoch, run.seed);
  const nn::CrossEntropyLoss loss({-100, run.label_smoothing});
  optim::AdamW opt(optim::make_param_groups(model, run.weight_decay), gpt_adam_options(run));
  optim::DataParallel parallel(model, {num_threads(), micro_batch});
  const std::vector<Tensor> params = model.parameters();
  Generator dropout_seeds(run.seed + 1);

  std::int64_t step = 0;
  std::vector<double> gradient_s, update_s;
  double sink = 0;
  auto train_step = [&] {
    opt.zero_grad();
    model.zero_grad();
    const auto t0 = Clock::now();
    const Batch batch = windows.batch(step++ % run.steps_per_epoch);
    sink += parallel.gradient(batch, loss, dropout_seeds.next_u64()).loss;
    const auto t1 = Clock::now();
    optim::clip_grad_norm(params, run.clip_norm);
    opt.step();
    gradient_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    update_s.push_back(seconds_since(t1));
  };
  int calls = 0;
  std::vector<double> cpu_per_step;
  const std::vector<double> per_step = time_calls(train_step, o, &calls, &cpu_per_step);
  auto timed = [&](std::vector<double>& v) {  // the timed steps only: warm-up ones come first
    v.erase(v.begin(), v.begin() + std::min<std::size_t>(o.warmup, v.size()));
    return median(v) * 1e3;
  };

  const double tokens_per_step = static_cast<double>(run.batch_size * run.model.context);
  std::vector<double> tokens_per_s, tokens_per_cpu_s;
  for (double s : per_step) tokens_per_s.push_back(tokens_per_step / s);
  for (double s : cpu_per_step) tokens_per_cpu_s.push_back(tokens_per_step / s);
  json j = header("gpt");
  j["model"] = preset;
  j["batch"] = run.batch_size;
  j["context"] = run.model.context;
  j["micro_batch"] = micro_batch;
  j["gemm_piece_work"] = gemm_piece_work();
  j["gemm_kernel"] = gemm_kernel() == GemmKernel::uwaga ? "uwaga" : "openblas";
  j["warmup_steps"] = o.warmup;
  j["steps_per_repeat"] = calls;
  j["tokens_per_s"] = tokens_per_s;
  j["median_tokens_per_s"] = median(tokens_per_s);
  j["tokens_per_cpu_s"] = tokens_per_cpu_s;
  // Multiply-adds ×2 of one window's forward pass, counted as VitBackboneOptions::forward_flops
  // counts a ViT's (the attention over the whole T × T square; the causal mask skips none of the
  // products uwaga or PyTorch's reference computes), then forward + backward ≈ 3 forwards.
  const nn::GptConfig& m = run.model;
  const std::int64_t T = m.context, D = m.dim;
  const std::int64_t per_block = 2 * T * D * 3 * D + 2 * 2 * T * T * D + 2 * T * D * D +
                                 2 * 2 * T * D * m.mlp_dim;
  const double flops_per_token =
      3.0 * static_cast<double>(m.layers * per_block + 2 * T * D * m.vocab) / static_cast<double>(T);
  j["flops_per_token"] = flops_per_token;
  j["effective_gflops"] = median(tokens_per_s) * flops_per_token / 1e9;
  j["phase_ms"] = {{"gradient", timed(gradient_s)}, {"optimizer", timed(update_s)}};
  if (o.op_times) j["op_times"] = time_ops(train_step, o.op_steps);
  j["checksum"] = sink;
  j["parameters"] = model.num_parameters();
  j["rss_before_model_kb"] = rss_before_model;
  j["peak_rss_kb"] = peak_rss_kb();
  return j;
}

}  // namespace uwaga::apps
