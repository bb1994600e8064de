#include "optim/optimizer.h"

#include <cmath>
#include <map>
#include <set>

#include "core/graph.h"

namespace uwaga::optim {

bool default_no_decay(const std::string& name, const Tensor& param) {
  // Decay pulls weights towards 0. For a bias, a LayerNorm gain (whose neutral value is 1) or a
  // learned position/class vector that is not a sensible prior, so vectors are not decayed; nor
  // is any parameter named as an embedding: the position embeddings, the word embedding tables
  // and the ViT's patch projection patch_embed.weight. (timm decays that projection; here it
  // joins the other embeddings, and the presets' accuracies were measured so.)
  if (param.dim() < 2) return true;
  for (const char* part : {"embed", "pos_", "cls_token"})
    if (name.find(part) != std::string::npos) return true;
  return false;
}

std::vector<ParamGroup> make_param_groups(
    const nn::Module& model, double weight_decay,
    const std::function<bool(const std::string&, const Tensor&)>& no_decay) {
  if (!(weight_decay >= 0) || !std::isfinite(weight_decay))
    fail("make_param_groups: weight_decay must be a finite number >= 0, got ", weight_decay);
  const nn::NamedTensors named = model.named_parameters();
  if (named.empty()) fail("make_param_groups: the model has no parameters to optimize");
  ParamGroup decayed, plain;
  decayed.weight_decay = weight_decay;
  plain.weight_decay = 0.0;
  for (const auto& [name, param] : named) {
    ParamGroup& group = no_decay(name, param) ? plain : decayed;
    group.names.push_back(name);
    group.params.push_back(param);
  }
  std::vector<ParamGroup> groups;
  for (ParamGroup* group : {&decayed, &plain})
    if (!group->params.empty()) groups.push_back(std::move(*group));
  return groups;
}

Optimizer::Optimizer(std::vector<ParamGroup> groups, double lr) {
  set_lr(lr);
  std::set<std::string> seen;
  // A tensor listed twice (or two views of one storage) would be updated twice per step.
  std::map<const void*, std::string> storages;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    ParamGroup& group = groups[g];
    if (group.names.size() != group.params.size())
      fail("optimizer: parameter group ", g, " has ", group.params.size(), " parameters but ",
           group.names.size(), " names; give each parameter a name (state is stored by name)");
    if (!(group.weight_decay >= 0) || !std::isfinite(group.weight_decay))
      fail("optimizer: parameter group ", g, " has weight_decay ", group.weight_decay,
           "; it must be a finite number >= 0");
    for (std::size_t i = 0; i < group.params.size(); ++i) {
      const std::string& name = group.names[i];
      const Tensor& p = group.params[i];
      if (name.empty()) fail("optimizer: parameter ", i, " of group ", g, " has an empty name");
      if (!seen.insert(name).second)
        fail("optimizer: parameter name '", name, "' appears twice; names must be unique");
      if (!p.defined()) fail("optimizer: parameter '", name, "' is an undefined tensor");
      // backward() fills .grad on leaves only: a computed tensor would never move.
      if (!p.is_leaf())
        fail("optimizer: parameter '", name, "' is not a leaf tensor (the result of '",
             p.grad_fn()->op, "'), so backward() gives it no gradient and it would never be "
             "updated; optimize the leaf it was computed from, or x.detach().requires_grad_()");
      if (!p.is_floating())
        fail("optimizer: parameter '", name, "' has dtype ", dtype_name(p.dtype()),
             "; only float32 and float64 tensors can be optimized");
      auto [other, fresh] = storages.emplace(p.impl().storage.get(), name);
      if (!fresh)
        fail("optimizer: parameters '", other->second, "' and '", name,
             "' are the same tensor (or share its storage); each would be updated twice");
    }
    if (!group.params.empty()) groups_.push_back(std::move(group));
  }
  if (groups_.empty())
    fail("optimizer: no parameters to optimize (every parameter group is empty)");
}

void Optimizer::set_lr(double lr) {
  if (!(lr >= 0) || !std::isfinite(lr))
    fail("optimizer: the learning rate must be a finite number >= 0, got ", lr);
  lr_ = lr;
}

void Optimizer::zero_grad() {
  for (ParamGroup& group : groups_)
    for (Tensor& p : group.params) p.zero_grad();
}

// ---- state helpers --------------------------------------------------------------------------

Tensor Optimizer::step_state() const { return Tensor::from_indices({steps_}, {}); }

std::int64_t Optimizer::saved_step(const std::map<std::string, Tensor>& state, const char* who) {
  auto it = state.find("step");
  if (it == state.end()) fail(who, ": the state has no \"step\" entry");
  if (it->second.numel() != 1)
    fail(who, ": \"step\" must hold one number, got shape ", shape_str(it->second.shape()));
  const double step = it->second.item();
  if (!(step >= 0) || step != std::floor(step) || step > kMaxSteps)
    fail(who, ": \"step\" must be a whole number from 0 to ", kMaxSteps, ", got ", step);
  return static_cast<std::int64_t>(step);
}

Tensor Optimizer::load_buffer(const std::map<std::string, Tensor>& state, const std::string& key,
                              const Tensor& param, const char* who) {
  auto it = state.find(key);
  if (it == state.end()) return Tensor();
  const Tensor& saved = it->second;
  if (!saved.defined()) fail(who, ": \"", key, "\" is an undefined tensor");
  if (saved.shape() != param.shape())
    fail(who, ": \"", key, "\" has shape ", shape_str(saved.shape()),
         " but the parameter has shape ", shape_str(param.shape()));
  Tensor buffer = Tensor::empty(param.shape(), param.dtype());
  buffer.copy_from(saved);  // converts the dtype when the checkpoint used another one
  return buffer;
}

void Optimizer::check_state_keys(const std::map<std::string, Tensor>& state,
                                 const std::vector<std::string>& fields, const char* who) const {
  std::set<std::string> known = {"step"};
  for (const ParamGroup& group : groups_)
    for (const std::string& name : group.names)
      for (const std::string& field : fields) known.insert(name + "." + field);
  std::string unexpected;
  for (const auto& entry : state)
    if (!known.count(entry.first)) unexpected += (unexpected.empty() ? "" : ", ") + entry.first;
  if (!unexpected.empty())
    fail(who, ": unexpected entries in the state (from another optimizer or model?): ", unexpected);
}

Tensor Optimizer::snapshot(const Tensor& buffer) {
  Tensor copy = Tensor::empty_like(buffer);
  copy.copy_from(buffer);
  return copy;
}

void check_optimizer_of(const Optimizer& optimizer, const nn::Module& model) {
  std::set<const void*> model_storages;
  for (const Tensor& p : model.parameters()) model_storages.insert(p.impl().storage.get());
  for (const ParamGroup& group : optimizer.groups())
    for (std::size_t i = 0; i < group.params.size(); ++i)
      if (!model_storages.count(group.params[i].impl().storage.get()))
        fail("Trainer: the optimizer's parameter '", group.names[i],
             "' is not a parameter of the model (an optimizer built for another model?)");
}

}  // namespace uwaga::optim
