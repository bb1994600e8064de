#pragma once
// Module: the base of every layer. A module owns named parameters and named submodules, so a
// whole model can list its parameters as "blocks.3.attn.qkv.weight" — the names PyTorch gives —
// which is what optimizers, checkpoints and parity tests with PyTorch rely on.
//
// Buffers are the other state a module keeps by name: values it computes rather than learns, such
// as BatchNorm's running statistics ("decoder.bn1.running_mean"). They travel with the
// parameters in state_dict() — so checkpoints save and restore them — but optimizers never see
// them (parameters() lists parameters only) and they carry no gradient.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace uwaga::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using StateDict = std::map<std::string, Tensor>;

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Parameters of this module and all submodules, depth first, in registration order.
  NamedTensors named_parameters() const;
  std::vector<Tensor> parameters() const;
  std::int64_t num_parameters() const;
  // Buffers of this module and all submodules, depth first, in registration order.
  NamedTensors named_buffers() const;
  std::vector<Tensor> buffers() const;
  // Submodules by full name ("blocks.0.attn").
  std::vector<std::pair<std::string, Module*>> named_modules();

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void zero_grad();

  // Converts every parameter and every floating-point buffer in place (e.g. to float64 for
  // gradient checks); integer buffers (a batch count) stay integers.
  void to(DType dtype);

  // The parameters and buffers by name (the tensors themselves, not copies), as PyTorch's
  // state_dict() holds both.
  StateDict state_dict() const;
  // Copies values into the parameters and buffers. Every name must match and every shape agree;
  // the error lists what is missing, unexpected or mis-shaped. Values are converted to each
  // tensor's dtype.
  void load_state_dict(const StateDict& state);

  // Points every parameter at the storage of `source`'s parameter of the same name, so the two
  // modules hold one set of values (an update through either is seen by both) but keep separate
  // gradients. This is how optim::DataParallel makes per-thread replicas of a model. Names,
  // shapes and dtypes must all match.
  void alias_parameters(const Module& source);

  // Points every buffer at the storage of `source`'s buffer of the same name, read-only: from
  // then on this module and its submodules read the source's buffers (BatchNorm in eval mode reads
  // the running statistics) but never write them (updates_buffers() is false), so replicas on
  // other threads neither race with the source nor with each other. optim::DataParallel calls it
  // beside alias_parameters; the source alone keeps its running statistics up to date.
  void alias_buffers(const Module& source);
  // False once alias_buffers made this module a reader of another's buffers.
  bool updates_buffers() const { return updates_buffers_; }

 protected:
  Tensor& register_parameter(const std::string& name, Tensor value);
  // A buffer: state kept by name, saved in state_dict(), never trained (requires_grad is off).
  Tensor& register_buffer(const std::string& name, Tensor value);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }
  // Registers `module` as part of this one without a name of its own: its parameters and
  // submodules are listed as this module's ("cls_token", not "backbone.cls_token"). This is how
  // two models share one implementation of their common layers while each keeps the names its
  // checkpoints and PyTorch's state dict use: VisionTransformer lists VitBackbone's parameters
  // as timm does, flat, where ViTPose puts them under "backbone.". The names must not collide
  // with this module's own.
  template <class M>
  std::shared_ptr<M> register_unnamed_module(std::shared_ptr<M> module) {
    add_child("", module, /*unnamed=*/true);
    return module;
  }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> module, bool unnamed = false);
  void collect(const std::string& prefix, NamedTensors& out, bool buffers) const;
  void check_unused_name(const std::string& name, const char* what) const;
  void stop_updating_buffers();

  NamedTensors params_;
  NamedTensors buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  bool updates_buffers_ = true;
};

}  // namespace uwaga::nn
