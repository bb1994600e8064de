#include "optim/trainer_options.h"

#include "core/error.h"

namespace uwaga::optim {

void TrainerOptions::validate() const {
  if (epochs < 0) fail("Trainer: epochs must be >= 0, got ", epochs);
  if (max_steps < 0) fail("Trainer: max_steps must be >= 0 (0: no limit), got ", max_steps);
  if (!(clip_norm >= 0))
    fail("Trainer: clip_norm must be >= 0 (0: no clipping), got ", clip_norm);
  if (log_every < 0) fail("Trainer: log_every must be >= 0 (0: no step lines), got ", log_every);
  if (checkpoint_every < 0)
    fail("Trainer: checkpoint_every must be >= 0 (0: at epoch ends), got ", checkpoint_every);
  if (save_every < 1) fail("Trainer: save_every must be >= 1, got ", save_every);
  if (eval_every < 0)
    fail("Trainer: eval_every must be >= 0 (0: no evaluation), got ", eval_every);
  if (resume && out_dir.empty())
    fail("Trainer: resume needs out_dir, the directory holding checkpoint.safetensors");
}

}  // namespace uwaga::optim
