#include "nn/module.h"

#include <sstream>

#include "core/graph.h"

namespace uwaga::nn {

namespace {
thread_local bool declare_only_mode = false;

// A tensor of `shape` with no storage: what declare-only mode registers.
Tensor declared_tensor(const Shape& shape, DType dtype) {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

// A new tensor of `shape` filled by `init`, or a declared one in declare-only mode.
Tensor made_or_declared(const Shape& shape, DType dtype, const std::function<void(Tensor&)>& init) {
  if (declare_only_mode) return declared_tensor(shape, dtype);
  Tensor value = Tensor::empty(shape, dtype);
  init(value);
  return value;
}
}  // namespace

DeclareOnly::DeclareOnly() : outer_(declare_only_mode) { declare_only_mode = true; }
DeclareOnly::~DeclareOnly() { declare_only_mode = outer_; }
bool declaring_only() { return declare_only_mode; }
bool is_declared_only(const Tensor& t) { return t.defined() && !t.impl().storage; }

void Module::check_unused_name(const std::string& name, const char* what) const {
  for (auto& [n, p] : params_)
    if (n == name) fail(what, ": '", name, "' is already registered as a parameter");
  for (auto& [n, b] : buffers_)
    if (n == name) fail(what, ": '", name, "' is already registered as a buffer");
}

Tensor& Module::register_parameter(const std::string& name, const Shape& shape, const Init& init) {
  return register_parameter(name, made_or_declared(shape, DType::Float32, init));
}

Tensor& Module::register_buffer(const std::string& name, const Shape& shape, const Init& init,
                                DType dtype) {
  return register_buffer(name, made_or_declared(shape, dtype, init));
}

Tensor& Module::register_parameter(const std::string& name, Tensor value) {
  check_unused_name(name, "register_parameter");
  value.requires_grad_(true);
  value.set_name(name);
  params_.emplace_back(name, std::move(value));
  return params_.back().second;
}

Tensor& Module::register_buffer(const std::string& name, Tensor value) {
  check_unused_name(name, "register_buffer");
  if (!value.defined()) fail("register_buffer: '", name, "' is an undefined tensor");
  value.set_name(name);
  buffers_.emplace_back(name, std::move(value));
  return buffers_.back().second;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module, bool unnamed) {
  if (!module) fail("register_module: '", name, "' is null");
  if (name.empty() && !unnamed)
    fail("register_module: a submodule needs a name (register_unnamed_module adds an unnamed "
         "part)");
  for (auto& [n, m] : children_)
    if (n == name) fail("register_module: '", name, "' is already registered");
  // Each tensor carries its name from this module down, so a drawing of the graph (to_dot) or a
  // debugger shows "blocks.0.attn.qkv.weight" rather than "weight". Modules are built from the
  // leaves up, so the top module's registration sets the full names last.
  const std::string prefix = name.empty() ? "" : name + ".";
  for (auto& [n, t] : module->named_parameters()) t.set_name(prefix + n);
  for (auto& [n, t] : module->named_buffers()) t.set_name(prefix + n);
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, NamedTensors& out, bool buffers) const {
  for (auto& [name, t] : buffers ? buffers_ : params_) out.emplace_back(prefix + name, t);
  for (auto& [name, child] : children_)
    child->collect(name.empty() ? prefix : prefix + name + ".", out, buffers);  // "": unnamed
}

NamedTensors Module::named_parameters() const {
  NamedTensors out;
  collect("", out, false);
  return out;
}

NamedTensors Module::named_buffers() const {
  NamedTensors out;
  collect("", out, true);
  return out;
}

std::vector<Tensor> Module::buffers() const {
  std::vector<Tensor> out;
  for (auto& [name, b] : named_buffers()) out.push_back(b);
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

StateShapes Module::state_shapes() const {
  StateShapes out;
  for (auto& [name, p] : named_parameters()) out[name] = p.shape();
  for (auto& [name, b] : named_buffers()) out[name] = b.shape();
  return out;
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

namespace {
// Checks that `mine` and `theirs` (this module's and the source's parameters or buffers) pair up
// by name, shape and dtype, then points each of mine at the storage of its partner.
void alias_storage(const NamedTensors& mine, const NamedTensors& theirs, const char* op,
                   const char* what) {
  if (mine.size() != theirs.size())
    fail(op, ": this module has ", mine.size(), " ", what, "s, the source ", theirs.size());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const auto& [name, p] = mine[i];
    const auto& [source_name, q] = theirs[i];
    if (name != source_name || p.shape() != q.shape() || p.dtype() != q.dtype())
      fail(op, ": ", what, " ", i, " is '", name, "' ", shape_str(p.shape()), " ",
           dtype_name(p.dtype()), " here but '", source_name, "' ", shape_str(q.shape()), " ",
           dtype_name(q.dtype()), " in the source");
  }
  for (std::size_t i = 0; i < mine.size(); ++i) {
    TensorImpl& p = mine[i].second.impl();
    p.storage = theirs[i].second.impl().storage;
    p.grad = nullptr;
  }
}
}  // namespace

void Module::alias_parameters(const Module& source) {
  alias_storage(named_parameters(), source.named_parameters(), "alias_parameters", "parameter");
}

void Module::alias_buffers(const Module& source) {
  alias_storage(named_buffers(), source.named_buffers(), "alias_buffers", "buffer");
  stop_updating_buffers();
}

void Module::stop_updating_buffers() {  // over every submodule, unnamed parts included
  updates_buffers_ = false;
  for (auto& [name, child] : children_) child->stop_updating_buffers();
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
  std::vector<Tensor> tensors = parameters();
  for (const Tensor& b : buffers())
    if (b.is_floating()) tensors.push_back(b);  // int64 (a batch count), bfloat16 (a copy) stay
  for (auto& t : tensors) {
    if (t.dtype() == dtype) continue;
    Tensor converted = t.to(dtype);
    // Swap the storage under the same handle, so every holder of the tensor sees the change.
    t.impl().storage = converted.impl().storage;
    t.impl().dtype = dtype;
    t.impl().grad = nullptr;
  }
}

StateDict Module::state_dict() const {
  StateDict out;
  for (auto& [name, p] : named_parameters()) out[name] = p;
  for (auto& [name, b] : named_buffers()) out[name] = b;
  return out;
}

void Module::load_state_dict(const StateDict& state) {
  std::vector<std::string> missing, unexpected, mismatched, undefined;
  NamedTensors params = named_parameters();  // and buffers
  for (auto& named : named_buffers()) params.push_back(named);
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
