#include "optim/adam.h"

#include <cmath>
#include <vector>

#include "core/threads.h"

namespace uwaga::optim {

// One Adam(W) step over the n elements of a parameter at its step t, as PyTorch 1.13 computes it
// (same operations in the same order):
//   bias_correction1 = 1 − β1^t,  step_size = lr / bias_correction1
//   denom = √v / √(1 − β2^t) + ε,  p ← p + (−step_size) · (m / denom)
// kL2 (Adam with weight decay) and kDecoupled (AdamW) are template flags rather than branches in
// the loop, so the loop has none and vectorises. adam_update computes the step's constants once;
// adam_elements updates a range of elements with them.
template <class T>
struct AdamScalars {  // the step's constants, in T
  T neg_step_size, bias_correction2_sqrt, b1, one_minus_b1, b2, one_minus_b2, eps, wd, shrink;
};

// Elements i0 … i1 − 1. A function of its own: inlined into Adam::step's loop over parameters,
// GCC 12 left this loop scalar ("latch block not empty"): 2.6 % of a mnist-tiny step.
template <class T, bool kL2, bool kDecoupled>
[[gnu::noinline]] void adam_elements(T* p, T* m, T* v, const T* grad, std::int64_t i0,
                                     std::int64_t i1, const AdamScalars<T> c) {
#pragma omp simd
  for (std::int64_t i = i0; i < i1; ++i) {
    if constexpr (kDecoupled) p[i] = p[i] * c.shrink;
    T g = grad[i];
    if constexpr (kL2) g = g + c.wd * p[i];
    m[i] = m[i] * c.b1 + c.one_minus_b1 * g;
    v[i] = v[i] * c.b2 + c.one_minus_b2 * g * g;
    const T denom = std::sqrt(v[i]) / c.bias_correction2_sqrt + c.eps;
    p[i] = p[i] + c.neg_step_size * (m[i] / denom);
  }
}

template <class T, bool kL2, bool kDecoupled>
void adam_update(T* p, T* m, T* v, const T* grad, std::int64_t n, std::int64_t t, double lr,
                 double beta1, double beta2, double eps, double weight_decay) {
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(t));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(t));
  const AdamScalars<T> c{static_cast<T>(-(lr / bias_correction1)),
                         static_cast<T>(std::sqrt(bias_correction2)),
                         static_cast<T>(beta1), static_cast<T>(1 - beta1),
                         static_cast<T>(beta2), static_cast<T>(1 - beta2),
                         static_cast<T>(eps), static_cast<T>(weight_decay),
                         static_cast<T>(1 - lr * weight_decay)};  // shrink: AdamW's decay factor
  parallel_for(n, n > kParallelThreshold, [=](std::int64_t i0, std::int64_t i1) {
    adam_elements<T, kL2, kDecoupled>(p, m, v, grad, i0, i1, c);
  });
}

template <class T>
void adam_update(T* p, T* m, T* v, const T* grad, std::int64_t n, std::int64_t t, double lr,
                 double beta1, double beta2, double eps, double weight_decay, bool decoupled) {
  if (decoupled)
    adam_update<T, false, true>(p, m, v, grad, n, t, lr, beta1, beta2, eps, weight_decay);
  else if (weight_decay != 0)
    adam_update<T, true, false>(p, m, v, grad, n, t, lr, beta1, beta2, eps, weight_decay);
  else
    adam_update<T, false, false>(p, m, v, grad, n, t, lr, beta1, beta2, eps, weight_decay);
}

static const AdamOptions& checked(const AdamOptions& o, const char* who) {
  if (!(o.lr >= 0) || !std::isfinite(o.lr))
    fail(who, ": lr must be a finite number >= 0, got ", o.lr);
  if (!(o.beta1 >= 0 && o.beta1 < 1)) fail(who, ": beta1 must be in [0, 1), got ", o.beta1);
  if (!(o.beta2 >= 0 && o.beta2 < 1)) fail(who, ": beta2 must be in [0, 1), got ", o.beta2);
  // eps = 0 would divide 0 by 0 for a parameter whose gradient has always been 0 (an unused
  // embedding row): its update would be NaN.
  if (!(o.eps > 0) || !std::isfinite(o.eps))
    fail(who, ": eps must be a finite number > 0, got ", o.eps);
  return o;
}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options, bool decoupled)
    : Optimizer(std::move(groups), checked(options, decoupled ? "AdamW" : "Adam").lr),
      options_(options),
      decoupled_(decoupled) {
  for (const ParamGroup& group : groups_) state_.emplace_back(group.params.size());
}

void Adam::step() {
  init_threads();
  // Checks and state first (one thread), then the updates: each parameter is small, so the
  // threads share out whole parameters rather than split each one.
  struct Update {
    Tensor p, grad;
    ParamState* state;
    double weight_decay;
  };
  std::vector<Update> updates;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    ParamGroup& group = groups_[g];
    for (std::size_t i = 0; i < group.params.size(); ++i) {
      Tensor& p = group.params[i];
      const Tensor grad = p.grad();
      if (!grad.defined()) continue;  // not used by this step's loss
      if (grad.dtype() != p.dtype() || !p.is_floating())
        fail(name(), ": parameter '", group.names[i], "' is ", dtype_name(p.dtype()),
             " and its gradient ", dtype_name(grad.dtype()), "; both must be the same float dtype");
      ParamState& s = state_[g][i];
      if (!s.exp_avg.defined()) {  // the only allocations: once per parameter
        s.exp_avg = Tensor::zeros_like(p);
        s.exp_avg_sq = Tensor::zeros_like(p);
      }
      if (s.exp_avg.dtype() != p.dtype())
        fail(name(), ": the state of '", group.names[i], "' is ", dtype_name(s.exp_avg.dtype()),
             " but the parameter is now ", dtype_name(p.dtype()));
      updates.push_back({p, grad, &s, group.weight_decay});
    }
  }
  for (Update& up : updates) ++up.state->step;  // only once every check has passed
  auto update = [&](Update& up) {
    ParamState& s = *up.state;
    dispatch_float(up.p.dtype(), name(), [&](auto tag) {
      using T = decltype(tag);
      adam_update<T>(up.p.data<T>(), s.exp_avg.data<T>(), s.exp_avg_sq.data<T>(),
                     up.grad.data<T>(), up.p.numel(), s.step, lr_, options_.beta1,
                     options_.beta2, options_.eps, up.weight_decay, decoupled_);
    });
    up.p.bump_version();
  };
  // Parameters differ in size (a 64-element bias, a 192 × 64 matrix), so threads take them one
  // at a time as they finish (dynamic schedule) rather than in parallel_for's equal pieces. On one
  // thread no OpenMP region is entered at all (see parallel_for in core/threads.h).
  const auto count = static_cast<std::int64_t>(updates.size());
  if (count > 1 && num_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel for schedule(dynamic)
    for (std::int64_t u = 0; u < count; ++u) update(updates[u]);
  } else {
    for (Update& up : updates) update(up);
  }
  ++steps_;
}

std::map<std::string, Tensor> Adam::state(StateAccess access) const {
  std::map<std::string, Tensor> out;
  out["step"] = step_state();
  for (std::size_t g = 0; g < groups_.size(); ++g)
    for (std::size_t i = 0; i < groups_[g].params.size(); ++i) {
      const ParamState& s = state_[g][i];
      if (!s.exp_avg.defined()) continue;
      const std::string& name = groups_[g].names[i];
      out[name + ".exp_avg"] = state_buffer(s.exp_avg, access);
      out[name + ".exp_avg_sq"] = state_buffer(s.exp_avg_sq, access);
      out[name + ".step"] = Tensor::from_indices({s.step}, {});
    }
  return out;
}

void Adam::load_state(const std::map<std::string, Tensor>& state) {
  // Everything is checked before anything changes, so a failed load leaves the optimizer as it was.
  const std::string who = std::string(name()) + ".load_state";
  check_state_keys(state, {"exp_avg", "exp_avg_sq", "step"}, who.c_str());
  const std::int64_t step = saved_step(state, who.c_str());
  std::vector<std::vector<ParamState>> loaded;
  for (const ParamGroup& group : groups_) {
    loaded.emplace_back();
    for (std::size_t i = 0; i < group.params.size(); ++i) {
      const std::string& name = group.names[i];
      ParamState s;
      s.exp_avg = load_buffer(state, name + ".exp_avg", group.params[i], who.c_str());
      s.exp_avg_sq = load_buffer(state, name + ".exp_avg_sq", group.params[i], who.c_str());
      if (s.exp_avg.defined() != s.exp_avg_sq.defined())
        fail(who, ": the state of '", name, "' has only one of exp_avg and exp_avg_sq");
      if (s.exp_avg.defined()) {
        // Without its own count the parameter has taken every step the optimizer has.
        auto own = state.find(name + ".step");
        s.step = own == state.end() ? step : saved_step({{"step", own->second}}, who.c_str());
        if (s.step == 0) fail(who, ": '", name, "' has exp_avg and exp_avg_sq but step 0");
      } else if (state.count(name + ".step")) {
        fail(who, ": the state has \"", name, ".step\" but no exp_avg and exp_avg_sq");
      }
      loaded.back().push_back(std::move(s));
    }
  }
  state_ = std::move(loaded);
  steps_ = step;
}

}  // namespace uwaga::optim
