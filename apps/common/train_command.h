#pragma once
// The train mode of every program, written once. What all four do the same way lives here: the
// shared flags (--preset, --out, --resume, --max-steps, --attention, the optimisation flags,
// --micro-batch, --threads), the processes under mpirun and the check that they agree, fitting, the exit status
// and the "next:" lines. What is a program's own it says in a TrainProgram: its flags, its run
// (a preset or the resumed checkpoint's, with its data), its training setup, its summary and its
// result line.
//
//   uwaga-vit train                     train_command(VitTrain)
//     parse the flags                     ← add_flags: --patch, --dim, ... --augment
//     on every process: the run           ← set_up: preset or resume, images, their statistics
//     every process the same settings?    ← settings: the run's JSON, the test images counted
//     build the training                  ← start: VitTraining(run, train, test, options)
//     process 0: the summary              ← print_summary: model, tokens, FLOPs, optimiser
//     fit                                 ← fit
//     exit 1 (NaN), 130 (interrupted)
//     process 0: the result, the files    ← print_result: test accuracy; next_commands
#include <cxxopts.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/common/training_flags.h"
#include "optim/data_parallel.h"
#include "optim/trainer.h"

namespace uwaga::apps {

// How a program's train mode names itself and its data, for --help and the shared flags.
struct TrainModeText {
  std::string program;          // "uwaga-vit"
  std::string description;      // the line under the usage in --help
  std::string presets;          // --preset's help: "mnist-tiny, mnist-best, ..."
  std::string default_preset;   // --preset's default
  std::string examples;         // what --batch-size counts ("images", "sentence pairs")
  std::string seeded;           // what --seed seeds ("initialisation and shuffling")
  bool label_smoothing = true;  // false: no --label-smoothing (a loss with no classes)
  std::int64_t micro_batch = 0;    // --micro-batch's default
  std::string micro_batch_items;   // what it counts ("images")
};

// What the settings check compares across processes besides the trainer's flags: the run's
// configuration (JSON text, the training data's statistics included) and how many items its
// evaluation scores.
struct RunSettings {
  std::string run_json;
  std::int64_t eval_items = 0;
  double parameters = 0;  // the model's, when the program knows them before it is built
  // The most examples a forward/backward pass takes when --micro-batch is not given (0: the
  // program's usual default): a model with a large output per example (GPT-2's 50,257 logits a
  // token) keeps them within memory this way.
  std::int64_t micro_batch = 0;
  // Epochs between checkpoints when --save-every is not given: 1, or (a model whose checkpoint
  // takes longer to write than an epoch to train) the run's epochs, so only the last is saved.
  std::int64_t save_every = 1;
};

// From this many parameters on, a run trains one replica of the model, however many threads it
// has: each of its matrix products is large enough to split across the threads on its own, and
// every further replica would hold a copy of the gradients (GPT-2 small: 0.5 GB each).
constexpr double kOneReplicaParameters = 20e6;

// One program's part of `train` (see the outline at the top). train_command calls these in that
// order; set_up runs on every process, print_summary and print_result only on process 0.
class TrainProgram {
 public:
  virtual ~TrainProgram() = default;

  virtual TrainModeText text() const = 0;
  // Its own flags (model, data), shown after the shared --preset, --out, --resume, --max-steps.
  virtual void add_flags(cxxopts::Options& o) const = 0;
  // The run: a new one (the --preset with the flags on top) or the resumed one (new_or_resumed_run
  // in training_flags.h) with --attention (attention_path), checked, with its data loaded. A uwaga::Error here ends every process
  // with its message.
  virtual RunSettings set_up(const cxxopts::ParseResult& r, const TrainingOutput& output) = 0;
  // Builds the training setup (model, data order, loss, optimiser, schedule, Trainer).
  virtual void start(optim::TrainerOptions options) = 0;
  // The run at a glance, before the first step, in a RunSummary's lines (apps/common/run_summary.h);
  // ends with its threads(parallel).
  virtual void print_summary(const optim::DataParallelOptions& parallel) = 0;
  virtual optim::TrainSummary fit() = 0;
  // The last evaluation, as a line ("test accuracy: 97.52% ..."), after a run that finished or
  // stopped at --max-steps.
  virtual void print_result(const optim::TrainSummary& summary) = 0;
  // What to run next, each a command line as the user would type it; `program` is the program as
  // it was run, `checkpoint` the run's checkpoint quoted for the shell.
  virtual std::vector<std::string> next_commands(const cxxopts::ParseResult& r,
                                                 const std::string& program,
                                                 const TrainingOutput& output,
                                                 const std::string& checkpoint) const = 0;
};

// `uwaga-X train ...` (argv[0] is the mode): the exit status is 0 when the run finished or
// reached --max-steps, 1 when it stopped on a non-finite loss, 130 when it was interrupted (it
// saved a checkpoint to resume from). Bad flags or data are thrown as uwaga::Error (status 2).
int train_command(TrainProgram& program, int argc, char** argv);

// After `train`: draws RUN/curves.svg (SVG only, apps/common/training_plot.h) and prints where the
// checkpoint, the log and the curves are, then the `next` commands to try. A log that cannot be
// drawn yet (no step record) leaves the curves out.
void print_run_files(const std::string& run_dir, const std::vector<std::string>& next);

}  // namespace uwaga::apps
