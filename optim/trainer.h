#pragma once
// Trainer: the training loop shared by every app. An app hands it what to train — a model, where
// the batches come from and the loss — and the trainer does the rest, the same way for every
// model. One step, top to bottom (Run::train_step in optim/trainer.cpp):
//
//   batch    = data.batch(i)                       data/     (a BatchSource)
//   gradient = parallel.gradient(batch, loss)      optim/data_parallel: on each thread's replica
//                output = model.forward_batch(…)   nn/       the model
//                L_c = loss(output, targets)       nn/loss   the loss
//                L_c.backward(n_c/n)               core/     autograd
//              replicas' gradients summed,         optim/data_parallel
//              then across processes               optim/gradient_reduction
//   ‖g‖ = clip_grad_norm(params, clip_norm)        optim/clip
//   optimizer.step() at lr = schedule.lr(step)     optim/adam, optim/lr_schedule
//
// and around it: epochs (data.begin_epoch(e) at each start; evaluate() at the end of every
// eval_every-th and of the last, in eval mode without a graph), checkpoints (optim/checkpoint), a JSONL log (optim/jsonl_log), a progress bar
// (optim/progress), resuming, Ctrl-C (optim/stop_signal), one run per directory
// (optim/directory_lock), a step budget, and a stop on a non-finite loss or gradient.
//
// Exact resume. A run interrupted after k steps and resumed reproduces the losses of an
// uninterrupted run bit for bit (with the same thread count and micro-batch), because batch i of
// epoch e depends only on (seed, e, i) (data/batch_source.h) and the trainer saves the one
// generator it draws from: the dropout seeds, one per step.
//
// Files in out_dir:
//   checkpoint.safetensors  rewritten atomically at each save_every-th epoch end and the last,
//                           every checkpoint_every steps, on max_steps and on SIGINT / SIGTERM — never after a non-finite value
//                           (in a parameter or in the optimizer's state); when a save fails (a
//                           full disk), fit() throws and the previous checkpoint stays whole
//   log.jsonl               appended across resumes, one object per line:
//     {"type":"start", "epochs", "batches_per_epoch", "config"}
//     {"type":"step", "step", "epoch", "batch", "loss", "accuracy"?, "lr", "grad_norm",
//      "items_per_s"}                     (loss, accuracy, grad_norm: means since the last line)
//     {"type":"epoch", "epoch", "step", "lr", "seconds", "train_loss"?, "train_accuracy"?,
//      "items_per_s"?, "<eval_split>_<metric>"... (in the epochs evaluated)}
//     {"type":"resume", ...}   {"type":"stop", "reason": "finished" | "interrupted" |
//      "non_finite" | "max_steps" | "error", "step", "message"}   ("finished": every epoch ran;
//      "error": an exception, e.g. a full disk, ended fit(); a crashed run's log just ends)
// One run at a time per out_dir: fit() holds a lock on the directory, and a second run training
// into it meanwhile (another process) fails at once, naming the directory.
// Steps and epochs count from 1 in logs and messages ("step 3" is the third update). An epoch's
// train metrics cover all its steps, across a resume.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "data/batch_source.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "optim/data_parallel.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"
#include "optim/trainer_options.h"

namespace uwaga::optim {

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

// Metrics of the model after an epoch, e.g. {"accuracy", "loss"}; called in eval mode under a
// NoGradGuard.
using Evaluate = std::function<std::map<std::string, double>()>;

class Trainer {
 public:
  // The trainer keeps references: every argument must outlive it.
  Trainer(nn::Model& model, BatchSource& data, const nn::Loss& loss, Optimizer& optimizer,
          const LrSchedule& schedule, TrainerOptions options);
  TrainSummary fit(const Evaluate& evaluate = {});

  std::string checkpoint_path() const;  // out_dir/checkpoint.safetensors
  std::string log_path() const;         // out_dir/log.jsonl

 private:
  nn::Model& model_;
  BatchSource& data_;
  const nn::Loss& loss_;
  Optimizer& optimizer_;
  const LrSchedule& schedule_;
  TrainerOptions options_;
};

}  // namespace uwaga::optim
