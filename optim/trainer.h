#pragma once
// Trainer: the training loop shared by the apps. The app describes *what* to train as a TrainTask
// (model, batches, loss, evaluation); the trainer does the rest, the same way for every task:
//
//   for each epoch:            task.begin_epoch(epoch)
//     for each batch i:        lr = schedule.lr(step) → optimizer
//                              zero_grad; task.train_step(i): by default
//                                loss = task.train_batch(i); loss.backward()
//                              ‖g‖ = clip_grad_norm(params, clip_norm); optimizer.step()
//     end of epoch:            task.evaluate() (eval mode, no graph), summary line, checkpoint
//
// and around it: a progress bar (or plain log lines when stderr is not a terminal), a JSONL log,
// checkpoints, resuming, Ctrl-C, a step budget, and a stop on a non-finite loss or gradient.
//
// Exact resume. A run interrupted after k steps and resumed reproduces the losses of an
// uninterrupted run bit for bit (with the same thread count), provided the task keeps its side of
// the contract:
//   - begin_epoch(e) and train_batch(i) build batch i of epoch e from (seed, e, i) and from the
//     state that save_state() captures — nothing else (no clock, no global generator);
//   - save_state() / load_state() capture every generator the task draws from (dropout, noise).
// On resume the trainer calls begin_epoch(epoch) and *then* load_state(), so the task's state is
// exactly what it was when the checkpoint was written, whatever begin_epoch does.
//
// Files in out_dir:
//   checkpoint.safetensors  rewritten atomically at each epoch end, every checkpoint_every steps,
//                           on max_steps and on SIGINT / SIGTERM — never after a non-finite value
//                           (in a parameter or in the optimizer's state); when a save fails (a
//                           full disk), fit() throws and the previous checkpoint stays whole
//   log.jsonl               appended across resumes, one object per line:
//     {"type":"step", "step", "epoch", "batch", "loss", "accuracy"?, "lr", "grad_norm",
//      "items_per_s"}                     (loss, accuracy, grad_norm: means since the last line)
//     {"type":"epoch", "epoch", "step", "lr", "seconds", "train_loss"?, "train_accuracy"?,
//      "items_per_s"?, "test_<metric>"...}
//     {"type":"resume", ...}   {"type":"stop", "reason": "interrupted" | "non_finite" |
//      "max_steps" | "error", "message"}   ("error": an exception, e.g. a full disk, ended fit())
// One run at a time per out_dir: fit() holds a lock on the directory, and a second run training
// into it meanwhile (another process) fails at once, naming the directory.
// Steps and epochs count from 1 in logs and messages ("step 3" is the third update). An epoch's
// train metrics cover the steps this process ran (after a resume, only the rest of the epoch).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "nn/module.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"

namespace uwaga::optim {

struct StepResult {
  Tensor loss;               // scalar, attached to the graph
  std::int64_t items = 0;    // examples (or tokens) in the batch, for throughput and accuracy
  std::int64_t correct = -1; // correctly predicted items; -1 when accuracy does not apply
};

class TrainTask {
 public:
  virtual ~TrainTask() = default;
  virtual nn::Module& model() = 0;
  virtual std::int64_t batches_per_epoch() const = 0;
  virtual void begin_epoch(std::int64_t epoch) = 0;        // e.g. the epoch's seeded shuffle
  virtual StepResult train_batch(std::int64_t index) = 0;  // forward + loss (model in train mode)
  // Forward, loss and backward of batch `index`: what the trainer calls. By default train_batch()
  // and backward() of its loss; a task that computes the gradient itself (on several threads, with
  // optim::DataParallel) overrides it and returns the loss as a value.
  virtual StepResult train_step(std::int64_t index);
  // Metrics on the test split, e.g. {"accuracy", "loss"}; called in eval mode under NoGradGuard.
  virtual std::map<std::string, double> evaluate() = 0;
  // The split evaluate() measures, as the epoch line and the log name it ("test", "valid").
  virtual std::string eval_split() const { return "test"; }
  virtual std::string config_json() const = 0;             // stored in checkpoints
  virtual std::string save_state() const { return ""; }    // generator states etc.
  virtual void load_state(const std::string&) {}
};

struct TrainerOptions {
  std::int64_t epochs = 1;
  std::int64_t max_steps = 0;         // 0: no limit; counts steps across resumes
  double clip_norm = 0.0;             // 0: only measure the gradient norm
  std::string out_dir;                // checkpoint.safetensors and log.jsonl; empty: no files
  bool resume = false;                // continue from out_dir/checkpoint.safetensors; without
                                      // it, an out_dir holding one is refused, not overwritten
  std::int64_t log_every = 50;        // steps between log lines (and JSONL records); 0: none
  std::int64_t checkpoint_every = 0;  // steps between checkpoints; 0: only at epoch ends
  bool evaluate_each_epoch = true;
  bool quiet = false;                 // no progress and no epoch lines (errors still print)
  std::string resume_command;         // printed after an interruption, e.g. "uwaga-vit --resume"
};

struct TrainSummary {
  std::int64_t steps = 0;        // total optimizer steps, including those before a resume
  std::int64_t epochs_done = 0;  // epochs completed, including their evaluation
  bool interrupted = false;      // stopped by SIGINT / SIGTERM (a checkpoint was saved)
  bool stopped_non_finite = false;
  std::string message;           // why the run stopped early, empty otherwise
  std::map<std::string, double> last_eval;
  double seconds = 0.0;          // wall time of this fit()
  std::vector<double> losses;    // the loss of each step taken by this fit(), in order
};

class Trainer {
 public:
  // The trainer keeps references: task, optimizer and schedule must outlive it.
  Trainer(TrainTask& task, Optimizer& optimizer, const LrSchedule& schedule,
          TrainerOptions options);
  TrainSummary fit();

  std::string checkpoint_path() const;  // out_dir/checkpoint.safetensors
  std::string log_path() const;         // out_dir/log.jsonl

 private:
  TrainTask& task_;
  Optimizer& optimizer_;
  const LrSchedule& schedule_;
  TrainerOptions options_;
};

}  // namespace uwaga::optim
