#pragma once
// Stochastic gradient descent with momentum, as torch.optim.SGD (dampening 0). Per parameter,
// with g its gradient, λ its group's weight decay, μ the momentum:
//   d ← g + λ·p                                  L2 weight decay, through the gradient
//   b ← d on the first step, b ← μ·b + d after    the momentum buffer ("<name>.momentum_buffer")
//   d ← d + μ·b (Nesterov)   or   d ← b
//   p ← p − lr·d
#include "optim/optimizer.h"

namespace uwaga::optim {

struct SgdOptions {
  double lr = 1e-3;
  double momentum = 0.0;  // in [0, 1); 0 keeps no buffer
  bool nesterov = false;  // needs momentum > 0
};

class Sgd : public Optimizer {
 public:
  Sgd(std::vector<ParamGroup> groups, SgdOptions options);

  void step() override;
  // "<name>.momentum_buffer" for each parameter that has one, and "step".
  using Optimizer::state;
  std::map<std::string, Tensor> state(StateAccess access) const override;
  void load_state(const std::map<std::string, Tensor>& state) override;

  const SgdOptions& options() const { return options_; }

 private:
  SgdOptions options_;
  // [group][param]: undefined until the parameter's first step
  std::vector<std::vector<Tensor>> momentum_buffer_;
};

}  // namespace uwaga::optim
