#pragma once
// Module: the base of every layer. A module owns named parameters and named submodules, so a
// whole model can list its parameters as "blocks.3.attn.qkv.weight" — the names PyTorch gives —
// which is what optimizers, checkpoints and parity tests with PyTorch rely on.
//
// Buffers are the other state a module keeps by name: values it computes rather than learns, such
// as BatchNorm's running statistics ("decoder.bn1.running_mean"). They travel with the
// parameters in state_dict() — so checkpoints save and restore them — but optimizers never see
// them (parameters() lists parameters only) and they carry no gradient.
//
// A module declares each parameter by name, shape and initialiser (register_parameter). Built in
// declare-only mode (DeclareOnly below), a model is that declaration alone: every parameter and
// buffer has its name and shape but no storage, and no initialiser runs. This is how a
// checkpoint's tensors are checked against the model its configuration describes before that
// model is built (apps/common/loaded_model.h): the shapes come from the same constructors that
// build the real model, not from a second list.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"
#include "nn/init.h"

namespace uwaga::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using StateDict = std::map<std::string, Tensor>;
using StateShapes = std::map<std::string, Shape>;  // name → shape, as a checkpoint's header lists

// Declare-only mode: while a DeclareOnly lives on this thread, every module built registers its
// parameters and buffers as tensors of their shape without storage, and runs no initialiser. Such
// a model costs a few small objects whatever sizes it declares; it can list its names and shapes
// (state_shapes()) but holds no values to compute with. nn/init.h's initialisers leave a declared
// tensor as it is, so a model that re-initialises its submodules' weights needs no special case.
class DeclareOnly {
 public:
  DeclareOnly();
  ~DeclareOnly();
  DeclareOnly(const DeclareOnly&) = delete;
  DeclareOnly& operator=(const DeclareOnly&) = delete;

 private:
  bool outer_;  // the mode before this one, restored on destruction
};
bool declaring_only();  // true while a DeclareOnly lives on this thread
// A tensor a module registered in declare-only mode: a shape, no storage.
bool is_declared_only(const Tensor& t);

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
  // The shapes of the parameters and buffers by name: the tensors a checkpoint of this model holds.
  StateShapes state_shapes() const;
  // Buffers of this module and all submodules, depth first, in registration order.
  NamedTensors named_buffers() const;
  std::vector<Tensor> buffers() const;
  // Submodules by full name ("blocks.0.attn").
  std::vector<std::pair<std::string, Module*>> named_modules();

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void zero_grad();

  // Converts every parameter and every float32/float64 buffer in place (e.g. to float64 for
  // gradient checks); integer buffers (a batch count) stay integers, bfloat16 ones (stored
  // copies) stay bfloat16.
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
  // An initialiser fills a new parameter or buffer in place: init::zeros, or a lambda such as
  // [&](Tensor& w) { init::trunc_normal(w, gen, 0.02); } (nn/init.h).
  using Init = std::function<void(Tensor&)>;
  // Registers a float32 parameter of `shape`, filled by `init`; in declare-only mode a declared
  // tensor of that shape (no storage), init not run.
  Tensor& register_parameter(const std::string& name, const Shape& shape, const Init& init);
  // Registers a value made elsewhere as it is (in declare-only mode too).
  Tensor& register_parameter(const std::string& name, Tensor value);
  // A buffer: state kept by name, saved in state_dict(), never trained (requires_grad is off).
  // Made and declared as register_parameter does.
  Tensor& register_buffer(const std::string& name, const Shape& shape, const Init& init,
                          DType dtype = DType::Float32);
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

// The parameter and buffer shapes by name of the module M(args...), from its declaration alone
// (built in declare-only mode, nothing allocated):
//   Generator unused(0);
//   StateShapes shapes = declared_shapes<VisionTransformer>(config, unused);
template <class M, class... Args>
StateShapes declared_shapes(Args&&... args) {
  DeclareOnly declare_only;
  const M module(std::forward<Args>(args)...);
  return module.state_shapes();
}

// The module M(config) built to receive its values from another (a replica, load_state_dict, a
// checkpoint): the random initialisers write zeros instead of drawing (nn/init.h WeightsToLoad).
template <class M, class Config>
std::unique_ptr<M> built_to_load(const Config& config) {
  const init::WeightsToLoad skip_draws;
  Generator unused(0);
  return std::make_unique<M>(config, unused);
}

}  // namespace uwaga::nn
