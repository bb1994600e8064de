#pragma once
// Adam and AdamW, as torch.optim.Adam and torch.optim.AdamW (PyTorch 1.13). Per parameter, with
// g its gradient, λ its group's weight decay and t the number of steps it has taken (1, 2, …):
//   g ← g + λ·p                          Adam: L2 weight decay, through the gradient
//   p ← p·(1 − lr·λ)                     AdamW instead: decay decoupled from the gradient
//   m ← β1·m + (1 − β1)·g                running mean of g          ("<name>.exp_avg")
//   v ← β2·v + (1 − β2)·g²               running mean of g²         ("<name>.exp_avg_sq")
//   p ← p − lr/(1 − β1^t) · m / (√v / √(1 − β2^t) + ε)
// m and v start at 0, so early on they are biased towards 0; dividing by 1 − β^t undoes that.
// The difference between the two: under Adam the decay is rescaled by 1/√v like the gradient
// (parameters with large gradients are barely decayed); under AdamW every weight shrinks by the
// same factor.
#include "optim/optimizer.h"

namespace uwaga::optim {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;  // each in [0, 1)
  double eps = 1e-8;                  // > 0 (with 0, a never-used parameter's update is 0/0)
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<ParamGroup> groups, AdamOptions options)
      : Adam(std::move(groups), options, false) {}

  void step() override;
  // "<name>.exp_avg", "<name>.exp_avg_sq" and "<name>.step" (that parameter's t) for each
  // parameter that has been stepped, and "step" (the optimizer's step count).
  using Optimizer::state;
  std::map<std::string, Tensor> state(StateAccess access) const override;
  void load_state(const std::map<std::string, Tensor>& state) override;

  const AdamOptions& options() const { return options_; }
  bool decoupled_weight_decay() const { return decoupled_; }

 protected:
  Adam(std::vector<ParamGroup> groups, AdamOptions options, bool decoupled);

 private:
  struct ParamState {
    Tensor exp_avg, exp_avg_sq;  // m, v: undefined until the parameter's first step
    std::int64_t step = 0;       // t
  };
  const char* name() const { return decoupled_ ? "AdamW" : "Adam"; }

  AdamOptions options_;
  bool decoupled_;
  std::vector<std::vector<ParamState>> state_;  // [group][param]
};

// Adam with decoupled weight decay (Loshchilov & Hutter): the same update, the same state.
class AdamW : public Adam {
 public:
  AdamW(std::vector<ParamGroup> groups, AdamOptions options)
      : Adam(std::move(groups), options, true) {}
};

}  // namespace uwaga::optim
