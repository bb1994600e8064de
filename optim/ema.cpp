#include "optim/ema.h"

#include <cmath>

#include "core/error.h"
#include "core/graph.h"

namespace uwaga::optim {
namespace {

const std::string kSuffix = ".ema";

}  // namespace

WithEma::WithEma(Optimizer& inner, double decay)
    : Optimizer(inner.groups(), inner.lr()), inner_(inner), decay_(decay) {
  if (!(decay >= 0 && decay < 1))
    fail("ema: the decay must be in [0, 1) (0.999 averages over ~1000 steps), got ", decay);
  for (const ParamGroup& g : groups_)
    for (std::size_t i = 0; i < g.params.size(); ++i) ema_[g.names[i]] = snapshot(g.params[i]);
}

void WithEma::step() {
  inner_.set_lr(lr());
  inner_.step();
  ++steps_;
  // θ̄ ← d θ̄ + (1 − d) θ, element by element in double.
  NoGradGuard no_grad;
  for (const ParamGroup& g : groups_)
    for (std::size_t i = 0; i < g.params.size(); ++i) {
      Tensor& avg = ema_.at(g.names[i]);
      const Tensor& p = g.params[i];
      dispatch_float(p.dtype(), "ema", [&](auto tag) {
        using T = decltype(tag);
        T* a = avg.data<T>();
        const T* v = p.data<T>();
        for (std::int64_t k = 0; k < p.numel(); ++k)
          a[k] = static_cast<T>(decay_ * static_cast<double>(a[k]) +
                                (1.0 - decay_) * static_cast<double>(v[k]));
      });
    }
}

std::map<std::string, Tensor> WithEma::state(StateAccess access) const {
  std::map<std::string, Tensor> s = inner_.state(access);
  for (const auto& [name, avg] : ema_) s[name + kSuffix] = state_buffer(avg, access);
  return s;
}

void WithEma::load_state(const std::map<std::string, Tensor>& state) {
  std::map<std::string, Tensor> inner;
  std::map<std::string, Tensor> averages;
  for (const auto& [key, value] : state) {
    if (key.size() > kSuffix.size() &&
        key.compare(key.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
      averages[key.substr(0, key.size() - kSuffix.size())] = value;
    else
      inner[key] = value;
  }
  // A checkpoint written without the average starts it from the weights it holds.
  for (const ParamGroup& g : groups_)
    for (std::size_t i = 0; i < g.params.size(); ++i) {
      auto it = averages.find(g.names[i]);
      Tensor loaded = it == averages.end() ? Tensor()
                                           : load_buffer(averages, g.names[i], g.params[i], "ema");
      ema_[g.names[i]] = loaded.defined() ? loaded : snapshot(g.params[i]);
      if (it != averages.end()) averages.erase(it);
    }
  if (!averages.empty())
    fail("ema: the checkpoint averages a parameter the model does not have: '",
         averages.begin()->first, "'");
  inner_.load_state(inner);
  steps_ = inner_.steps();
}

std::map<std::string, Tensor> WithEma::averages() const {
  std::map<std::string, Tensor> out;
  for (const auto& [name, avg] : ema_) out[name] = snapshot(avg);
  return out;
}

AveragedWeights::AveragedWeights(nn::Module& model, const std::map<std::string, Tensor>& averages) {
  NoGradGuard no_grad;
  for (auto& [name, param] : model.named_parameters()) {
    auto it = averages.find(name);
    if (it == averages.end()) fail("ema: no average for the parameter '", name, "'");
    if (it->second.shape() != param.shape())
      fail("ema: the average of '", name, "' has another shape than the parameter");
    Tensor own = param.clone();
    Tensor p = param;
    p.copy_from(it->second);
    swapped_.emplace_back(p, own);
  }
}

AveragedWeights::~AveragedWeights() {
  NoGradGuard no_grad;
  for (auto& [param, own] : swapped_) param.copy_from(own);
}

}  // namespace uwaga::optim
