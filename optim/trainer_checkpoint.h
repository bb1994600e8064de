#pragma once
// The Trainer's side of its checkpoints (optim/checkpoint): reading one back on every process of
// a run, and what the Trainer keeps in it besides the model, the optimizer and the position in the
// run (CheckpointInfo::trainer_state, JSON): the sums over the epoch so far, the generator the
// dropout seeds are drawn from, and how many processes trained the run. With them a resumed run
// goes on as the uninterrupted one would have (optim/trainer.h, "Exact resume").
#include <functional>
#include <optional>
#include <string>

#include "core/random.h"
#include "nn/module.h"
#include "optim/checkpoint.h"
#include "optim/gradient_reduction.h"
#include "optim/meter.h"
#include "optim/optimizer.h"

namespace uwaga::optim {

// Loads `checkpoint` into `model` and `opt` on every process: process 0 reads the file and, with
// several processes, hands its bytes to the others (which may run on hosts that cannot see it).
// When it is missing or cannot be loaded anywhere, every process fails with the message of the
// lowest rank at fault.
CheckpointInfo load_checkpoint_on_every_process(const std::string& checkpoint, nn::Module& model,
                                                Optimizer& opt, GradientReduction& processes);

// What would make a checkpoint of `model` and `opt` worse than none, and one load_checkpoint
// refuses: "parameter 'blocks.0.attn.qkv.weight' holds NaN or inf" (or a buffer, or the
// optimizer's state); "" when every value is finite. Finite gradients and a finite learning rate
// can still overflow a parameter (a learning rate of 1e30, say); a gradient of 1e21 is finite, its
// square in Adam's second moment in float32 is not, and freezes that parameter from then on.
std::string non_finite_state(const nn::Module& model, const Optimizer& opt);

// save_checkpoint of `model` and `opt`, and for a model of 80 M parameters or more a line before
// ("writing PATH ...") and after ("written: 1.49 GB in 7.0 s") through `say`: such a checkpoint
// (GPT-2 small with Adam's moments: 1.5 GB) takes seconds to write, too long for a silent pause.
void save_checkpoint_saying(const std::string& path, const nn::Module& model, const Optimizer& opt,
                            const CheckpointInfo& info,
                            const std::function<void(const std::string&)>& say);

struct TrainerState {
  Meter epoch;                                   // the epoch's steps so far
  std::optional<Generator::State> dropout_seeds;  // none in the oldest checkpoints
  int processes = 0;                             // 0: unknown (checkpoints before it was saved)

  std::string to_json() const;
  // The state saved in `info`. Checkpoints written before the trainer kept a state have none
  // (the epoch's sums restart); those written before it drew the dropout seeds kept them in
  // task_state (the translator's). Fails naming `checkpoint` when the state is damaged.
  static TrainerState from_checkpoint(const CheckpointInfo& info, const std::string& checkpoint);
};

}  // namespace uwaga::optim
