#include "optim/sgd.h"

#include <cmath>

#include "core/threads.h"

namespace uwaga::optim {

// One SGD step over the n elements of a parameter, as torch.optim.SGD computes it (same
// operations in the same order). buf is null when there is no momentum; `first` starts it.
template <class T>
void sgd_update(T* p, T* buf, const T* grad, std::int64_t n, double lr, double weight_decay,
                double momentum, bool nesterov, bool first) {
  const T neg_lr = static_cast<T>(-lr), wd = static_cast<T>(weight_decay);
  const T mu = static_cast<T>(momentum);
  parallel_for(n, n > kParallelThreshold, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      T d = grad[i];
      if (weight_decay != 0) d = d + wd * p[i];
      if (buf) {
        buf[i] = first ? d : buf[i] * mu + d;
        d = nesterov ? d + mu * buf[i] : buf[i];
      }
      p[i] = p[i] + neg_lr * d;
    }
  });
}

static const SgdOptions& checked(const SgdOptions& o) {
  if (!(o.lr >= 0) || !std::isfinite(o.lr))
    fail("Sgd: lr must be a finite number >= 0, got ", o.lr);
  if (!(o.momentum >= 0 && o.momentum < 1))
    fail("Sgd: momentum must be in [0, 1), got ", o.momentum);
  if (o.nesterov && o.momentum == 0)
    fail("Sgd: Nesterov momentum needs momentum > 0, got momentum ", o.momentum);
  return o;
}

Sgd::Sgd(std::vector<ParamGroup> groups, SgdOptions options)
    : Optimizer(std::move(groups), checked(options).lr), options_(options) {
  for (const ParamGroup& group : groups_) momentum_buffer_.emplace_back(group.params.size());
}

void Sgd::step() {
  init_threads();
  const bool with_momentum = options_.momentum != 0;
  // Every check before any change: a step that fails leaves every parameter as it was.
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& group = groups_[g];
    for (std::size_t i = 0; i < group.params.size(); ++i) {
      const Tensor& p = group.params[i];
      const Tensor grad = p.grad();
      if (!grad.defined()) continue;  // not used by this step's loss
      if (grad.dtype() != p.dtype())
        fail("Sgd: parameter '", group.names[i], "' is ", dtype_name(p.dtype()),
             " but its gradient is ", dtype_name(grad.dtype()));
      const Tensor& buf = momentum_buffer_[g][i];
      if (buf.defined() && buf.dtype() != p.dtype())
        fail("Sgd: the momentum buffer of '", group.names[i], "' is ", dtype_name(buf.dtype()),
             " but the parameter is now ", dtype_name(p.dtype()));
    }
  }
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    ParamGroup& group = groups_[g];
    for (std::size_t i = 0; i < group.params.size(); ++i) {
      Tensor& p = group.params[i];
      const Tensor grad = p.grad();
      if (!grad.defined()) continue;
      Tensor& buf = momentum_buffer_[g][i];
      const bool first = with_momentum && !buf.defined();
      if (first) buf = Tensor::empty_like(p);  // the only allocation: filled with d below
      dispatch_float(p.dtype(), "Sgd", [&](auto tag) {
        using T = decltype(tag);
        sgd_update<T>(p.data<T>(), with_momentum ? buf.data<T>() : nullptr, grad.data<T>(),
                      p.numel(), lr_, group.weight_decay, options_.momentum, options_.nesterov,
                      first);
      });
      p.bump_version();
    }
  }
  ++steps_;
}

std::map<std::string, Tensor> Sgd::state(StateAccess access) const {
  std::map<std::string, Tensor> out;
  out["step"] = step_state();
  for (std::size_t g = 0; g < groups_.size(); ++g)
    for (std::size_t i = 0; i < groups_[g].params.size(); ++i)
      if (momentum_buffer_[g][i].defined())
        out[groups_[g].names[i] + ".momentum_buffer"] = state_buffer(momentum_buffer_[g][i], access);
  return out;
}

void Sgd::load_state(const std::map<std::string, Tensor>& state) {
  // Everything is checked before anything changes, so a failed load leaves the optimizer as it was.
  const char* who = "Sgd.load_state";
  check_state_keys(state, {"momentum_buffer"}, who);
  const std::int64_t step = saved_step(state, who);
  std::vector<std::vector<Tensor>> buffers;
  for (const ParamGroup& group : groups_) {
    buffers.emplace_back();
    for (std::size_t i = 0; i < group.params.size(); ++i) {
      // Absent: the parameter has not been stepped yet; its buffer starts on its next step.
      const std::string key = group.names[i] + ".momentum_buffer";
      buffers.back().push_back(load_buffer(state, key, group.params[i], who));
      if (buffers.back().back().defined() && options_.momentum == 0)
        fail(who, ": the state has \"", key, "\" but this optimizer has no momentum");
    }
  }
  momentum_buffer_ = std::move(buffers);
  steps_ = step;
}

}  // namespace uwaga::optim
