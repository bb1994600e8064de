#include "nn/init.h"

#include <cmath>

#include "nn/module.h"

namespace uwaga::nn::init {

namespace {

thread_local bool weights_to_load = false;

// Whether a random initialiser draws nothing for t: it has no storage, or a file will overwrite
// its weights — then it is zeroed here, as it arrives uninitialised (nothing of the heap's
// leftovers reaches a model).
bool skip_draws(Tensor& t) {
  if (is_declared_only(t)) return true;
  if (weights_to_load) t.fill_(0);
  return weights_to_load;
}

// t's elements in order, element i the i-th value of draw() (as set_flat(i, draw()) would write
// them, without the per-element checks: GPT-2 small has 124 M).
template <class Draw>
void fill_drawn(Tensor& t, Draw draw) {
  dispatch_float(t.dtype(), "init", [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    const std::int64_t n = t.numel();
    for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(draw());
  });
  t.bump_version();
}

}  // namespace

WeightsToLoad::WeightsToLoad() : outer_(weights_to_load) { weights_to_load = true; }
WeightsToLoad::~WeightsToLoad() { weights_to_load = outer_; }

void trunc_normal(Tensor& t, Generator& gen, double std) {
  if (skip_draws(t)) return;
  fill_drawn(t, [&] {
    double v;
    do v = gen.normal();
    while (std::abs(v) > 2.0);
    return v * std;
  });
}

void normal(Tensor& t, Generator& gen, double std) {
  if (!skip_draws(t)) fill_drawn(t, [&] { return gen.normal() * std; });
}

void uniform(Tensor& t, Generator& gen, double bound) {
  if (!skip_draws(t)) fill_drawn(t, [&] { return (2 * gen.uniform() - 1) * bound; });
}

void kaiming_uniform(Tensor& t, Generator& gen, std::int64_t fan_in, double a) {
  if (fan_in < 1) fail("kaiming_uniform: fan_in must be positive, got ", fan_in);
  const double gain = std::sqrt(2.0 / (1.0 + a * a));
  uniform(t, gen, gain * std::sqrt(3.0 / static_cast<double>(fan_in)));
}

void kaiming_normal(Tensor& t, Generator& gen, std::int64_t fan_in) {
  if (fan_in < 1) fail("kaiming_normal: fan_in must be positive, got ", fan_in);
  normal(t, gen, std::sqrt(2.0 / static_cast<double>(fan_in)));
}

void zeros(Tensor& t) {
  if (!is_declared_only(t)) t.fill_(0);
}
void ones(Tensor& t) {
  if (!is_declared_only(t)) t.fill_(1);
}

}  // namespace uwaga::nn::init
