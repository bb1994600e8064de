#include "nn/module.h"

#include <sstream>

#include "core/graph.h"

namespace uwaga::nn {

Tensor& Module::register_parameter(const std::string& name, Tensor value) {
  for (auto& [n, p] : params_)
    if (n == name) fail("register_parameter: '", name, "' is already registered");
  value.requires_grad_(true);
  value.set_name(name);
  params_.emplace_back(name, std::move(value));
  return params_.back().second;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module, bool unnamed) {
  if (!module) fail("register_module: '", name, "' is null");
  if (name.empty() && !unnamed)
    fail("register_module: a submodule needs a name (register_unnamed_module adds an unnamed "
         "part)");
  for (auto& [n, m] : children_)
    if (n == name) fail("register_module: '", name, "' is already registered");
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, NamedTensors& out) const {
  for (auto& [name, p] : params_) out.emplace_back(prefix + name, p);
  for (auto& [name, child] : children_)
    child->collect(name.empty() ? prefix : prefix + name + ".", out);  // "": unnamed
}

NamedTensors Module::named_parameters() const {
  NamedTensors out;
  collect("", out);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, p] : named_parameters()) out.push_back(p);
  return out;
}

std::int64_t Module::num_parameters() const {
  std::int64_t n = 0;
  for (auto& p : parameters()) n += p.numel();
  return n;
}

std::vector<std::pair<std::string, Module*>> Module::named_modules() {
  std::vector<std::pair<std::string, Module*>> out;
  for (auto& [name, child] : children_) {
    if (name.empty()) {  // an unnamed part: its submodules are listed as this module's
      for (auto& entry : child->named_modules()) out.push_back(entry);
      continue;
    }
    out.emplace_back(name, child.get());
    for (auto& [sub, m] : child->named_modules()) out.emplace_back(name + "." + sub, m);
  }
  return out;
}

void Module::alias_parameters(const Module& source) {
  const NamedTensors mine = named_parameters(), theirs = source.named_parameters();
  if (mine.size() != theirs.size())
    fail("alias_parameters: this module has ", mine.size(), " parameters, the source ",
         theirs.size());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const auto& [name, p] = mine[i];
    const auto& [source_name, q] = theirs[i];
    if (name != source_name || p.shape() != q.shape() || p.dtype() != q.dtype())
      fail("alias_parameters: parameter ", i, " is '", name, "' ", shape_str(p.shape()), " ",
           dtype_name(p.dtype()), " here but '", source_name, "' ", shape_str(q.shape()), " ",
           dtype_name(q.dtype()), " in the source");
  }
  for (std::size_t i = 0; i < mine.size(); ++i) {
    TensorImpl& p = mine[i].second.impl();
    p.storage = theirs[i].second.impl().storage;
    p.grad = nullptr;
  }
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad() {
  for (auto& p : parameters()) p.zero_grad();
}

void Module::to(DType dtype) {
  // Parameters are trained: an integer dtype would truncate them and cannot carry gradients.
  if (dtype != DType::Float32 && dtype != DType::Float64)
    fail("Module::to: parameters must be float32 or float64, got ", dtype_name(dtype));
  NoGradGuard no_grad;
  for (auto& p : parameters()) {
    if (p.dtype() == dtype) continue;
    Tensor converted = p.to(dtype);
    // Swap the storage under the same handle, so every holder of the parameter sees the change.
    p.impl().storage = converted.impl().storage;
    p.impl().dtype = dtype;
    p.impl().grad = nullptr;
  }
}

StateDict Module::state_dict() const {
  StateDict out;
  for (auto& [name, p] : named_parameters()) out[name] = p;
  return out;
}

void Module::load_state_dict(const StateDict& state) {
  std::vector<std::string> missing, unexpected, mismatched, undefined;
  NamedTensors params = named_parameters();
  for (auto& [name, p] : params) {
    auto it = state.find(name);
    if (it == state.end()) missing.push_back(name);
    else if (!it->second.defined()) undefined.push_back(name);  // holds no tensor to copy
    else if (it->second.shape() != p.shape())
      mismatched.push_back(name + ": checkpoint " + shape_str(it->second.shape()) + ", model " +
                           shape_str(p.shape()));
  }
  for (auto& [name, t] : state) {
    bool known = false;
    for (auto& [n, p] : params) known |= n == name;
    if (!known) unexpected.push_back(name);
  }
  if (!missing.empty() || !unexpected.empty() || !mismatched.empty() || !undefined.empty()) {
    std::ostringstream msg;
    msg << "load_state_dict: the state does not fit the model.";
    auto list = [&](const char* what, const std::vector<std::string>& names) {
      if (names.empty()) return;
      msg << " " << what << " (" << names.size() << "):";
      for (std::size_t i = 0; i < names.size(); ++i) msg << (i ? ", " : " ") << names[i];
      msg << ".";
    };
    list("Missing", missing);
    list("Unexpected", unexpected);
    list("Shape mismatch", mismatched);
    list("Undefined tensor", undefined);
    throw Error(msg.str());
  }
  for (auto& [name, p] : params) p.copy_from(state.at(name));
}

}  // namespace uwaga::nn
