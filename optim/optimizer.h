#pragma once
// Optimizer: updates parameters from their gradients. Parameters come in groups, each with its
// own weight decay (by default no decay on biases, LayerNorm, embeddings and the class token).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "nn/module.h"

namespace uwaga::optim {

// The most steps a run is taken to have: far beyond any real run, and far enough below 2^63 that
// counts read from a checkpoint cannot overflow when stepped on or multiplied out.
inline constexpr std::int64_t kMaxSteps = std::int64_t{1} << 50;

struct ParamGroup {
  std::vector<std::string> names;  // parameter names, for state and checkpoints
  std::vector<Tensor> params;
  double weight_decay = 0.0;
};

// True for parameters that get no weight decay: fewer than 2 dims (biases, LayerNorm γ and β),
// embeddings and the class token (names containing "embed", "pos_" or "cls_token": the
// position embeddings, word embedding tables and the ViT's patch projection patch_embed.weight).
bool default_no_decay(const std::string& name, const Tensor& param);

// Two groups from a model: decayed (weight_decay) and not decayed (no_decay(name, p) true).
std::vector<ParamGroup> make_param_groups(
    const nn::Module& model, double weight_decay,
    const std::function<bool(const std::string&, const Tensor&)>& no_decay = default_no_decay);

class Optimizer {
 public:
  // Every group needs one unique name per parameter; groups without parameters are dropped.
  Optimizer(std::vector<ParamGroup> groups, double lr);
  virtual ~Optimizer() = default;

  // One update of every parameter that has a gradient, at the current learning rate.
  virtual void step() = 0;
  void zero_grad();

  double lr() const { return lr_; }
  void set_lr(double lr);  // fails unless lr is finite and ≥ 0
  std::int64_t steps() const { return steps_; }
  const std::vector<ParamGroup>& groups() const { return groups_; }

  // Everything step() depends on besides the parameters, by name ("<param name>.exp_avg", ...,
  // plus "step"), so a checkpoint can restore the optimizer exactly. Each buffer is a snapshot
  // in storage of its own, or with StateAccess::shared the buffer itself, for a caller that only
  // reads it before the next step (a checkpoint being written: GPT-2 small's Adam moments are
  // 1 GB, which a snapshot would copy).
  enum class StateAccess { snapshot, shared };
  virtual std::map<std::string, Tensor> state(StateAccess access) const = 0;
  std::map<std::string, Tensor> state() const { return state(StateAccess::snapshot); }
  virtual void load_state(const std::map<std::string, Tensor>& state) = 0;

 protected:
  // Helpers for the subclasses' state() / load_state(); `who` names the caller in errors.
  // "step" as a 0-d int64 tensor, and the value of a saved one (required when loading).
  Tensor step_state() const;
  static std::int64_t saved_step(const std::map<std::string, Tensor>& state, const char* who);
  // A copy of state[key] in `param`'s dtype, in storage of its own (so two optimizers never
  // share buffers); undefined when `key` is absent. Fails when the shape differs from param's.
  static Tensor load_buffer(const std::map<std::string, Tensor>& state, const std::string& key,
                            const Tensor& param, const char* who);
  // Fails, listing them, when `state` holds keys other than "step" and "<param name>.<field>".
  void check_state_keys(const std::map<std::string, Tensor>& state,
                        const std::vector<std::string>& fields, const char* who) const;
  // A copy of a state buffer in storage of its own, outside autograd: state() returns snapshots.
  static Tensor snapshot(const Tensor& buffer);
  // The buffer for state(access): a snapshot, or itself.
  static Tensor state_buffer(const Tensor& buffer, StateAccess access) {
    return access == StateAccess::shared ? buffer : snapshot(buffer);
  }

  std::vector<ParamGroup> groups_;
  double lr_ = 0;
  std::int64_t steps_ = 0;
};

// Fails naming the first parameter of `optimizer` that is not one of `model`'s (by storage): an
// optimizer built on another model's parameters would train nothing the model uses.
void check_optimizer_of(const Optimizer& optimizer, const nn::Module& model);

}  // namespace uwaga::optim
