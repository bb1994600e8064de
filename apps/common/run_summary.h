#pragma once
// The run at a glance that `train` prints before its first step (TrainProgram::print_summary), in
// one shape for every program: a heading, then labelled lines in one column, among them the
// optimiser's line, written from the training settings every run configuration has, and the
// threads' line:
//
//   uwaga-gpt: smoke
//     model     1 blocks, dim 32, heads 2, mlp 64, context 16, dropout 0
//     params    13280
//     optimiser AdamW lr 0.003 (warm-up 5 steps, cosine to 0.0003), beta2 0.99, weight decay ...
//     threads   2, each training a replica of the model on its share of a batch, ...
//
// What a program shows of its model and data is its own; it passes those lines as a label and a
// printf format.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "apps/common/train_command.h"
#include "optim/data_parallel.h"

namespace uwaga::apps {

class RunSummary {
 public:
  // `text`: the program's name, what its batches count and whether it has --label-smoothing.
  explicit RunSummary(TrainModeText text) : text_(std::move(text)) {}

  // "uwaga-vit: mnist-tiny on mnist": the program, the run's preset ("custom" for a run of flags
  // alone), then `more`.
  void heading(const std::string& preset, const std::string& more = "") const;

  // "  params    28480": the label in the column every line shares, then the format filled in as
  // printf fills it, and a newline.
  void line(const char* label, const char* format, ...) const
      __attribute__((format(printf, 3, 4)));

  // "  optimiser AdamW lr ...": the schedule (with `training`'s warm-up, cut to a short run), the
  // batch, the epochs and their steps, clipping and seed; β2 where the run sets it (uwaga-gpt),
  // label smoothing where the program has the flag.
  template <class RunConfig, class Training>
  void optimiser(const RunConfig& run, const Training& training) const {
    std::optional<double> beta2, label_smoothing;
    if constexpr (requires { run.beta2; }) beta2 = run.beta2;
    if (text_.label_smoothing) label_smoothing = run.label_smoothing;
    print_optimiser({.lr = run.lr,
                     .warmup = training.warmup(),
                     .min_lr = run.min_lr,
                     .beta2 = beta2,
                     .weight_decay = run.weight_decay,
                     .batch_size = run.batch_size,
                     .epochs = run.epochs,
                     .steps_per_epoch = training.batches_per_epoch(),
                     .label_smoothing = label_smoothing,
                     .clip_norm = run.clip_norm,
                     .seed = run.seed});
  }

  // "  threads   2, each training a replica of the model on its share of a batch, at most 16
  // images at a time" (or one replica whose operations the threads share).
  void threads(const optim::DataParallelOptions& parallel) const;

 private:
  // What the optimiser's line says, as the run and its training setup have it.
  struct OptimiserSettings {
    double lr = 0;
    std::int64_t warmup = 0;  // steps, as the schedule has them
    double min_lr = 0;
    std::optional<double> beta2;
    double weight_decay = 0;
    std::int64_t batch_size = 0;
    std::int64_t epochs = 0;
    std::int64_t steps_per_epoch = 0;
    std::optional<double> label_smoothing;
    double clip_norm = 0;
    std::uint64_t seed = 0;
  };
  void print_optimiser(const OptimiserSettings& s) const;

  TrainModeText text_;
};

}  // namespace uwaga::apps
