#pragma once
// An exponential moving average of the weights (Polyak averaging, as timm's ModelEmaV2), for
// evaluation: after every optimizer step
//   θ̄ ← d θ̄ + (1 − d) θ,     θ̄ = θ at the start,
// with decay d close to 1 (0.999: an average over the last ~1000 steps). The average is what gets
// evaluated; training goes on with θ.
//
// WithEma wraps the run's optimizer, so the Trainer needs nothing new: step() steps the wrapped
// optimizer and then the average, and state() carries the average ("<name>.ema") beside the
// wrapped optimizer's state, so checkpoints keep it and a resumed run continues it exactly.
#include <map>
#include <memory>
#include <string>

#include "optim/optimizer.h"

namespace uwaga::optim {

class WithEma : public Optimizer {
 public:
  // `inner` updates the parameters; the average covers every parameter of its groups.
  WithEma(Optimizer& inner, double decay);

  void step() override;
  using Optimizer::state;
  std::map<std::string, Tensor> state(StateAccess access) const override;
  void load_state(const std::map<std::string, Tensor>& state) override;

  double decay() const { return decay_; }
  // The averaged value of each parameter, by name (copies).
  std::map<std::string, Tensor> averages() const;

 private:
  Optimizer& inner_;
  double decay_;
  std::map<std::string, Tensor> ema_;  // name -> θ̄, storage of its own
};

// Swaps the values of `model`'s parameters with `averages` (names as named_parameters()) while it
// lives, and back when it goes: evaluation with the averaged weights.
class AveragedWeights {
 public:
  AveragedWeights(nn::Module& model, const std::map<std::string, Tensor>& averages);
  ~AveragedWeights();
  AveragedWeights(const AveragedWeights&) = delete;
  AveragedWeights& operator=(const AveragedWeights&) = delete;

 private:
  std::vector<std::pair<Tensor, Tensor>> swapped_;  // (parameter, its own value meanwhile)
};

}  // namespace uwaga::optim
