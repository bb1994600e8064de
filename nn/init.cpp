#include "nn/init.h"

#include <cmath>

#include "nn/module.h"

namespace uwaga::nn::init {

void trunc_normal(Tensor& t, Generator& gen, double std) {
  if (is_declared_only(t)) return;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    double v;
    do v = gen.normal();
    while (std::abs(v) > 2.0);
    t.set_flat(i, v * std);
  }
}

void normal(Tensor& t, Generator& gen, double std) {
  if (is_declared_only(t)) return;
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set_flat(i, gen.normal() * std);
}

void uniform(Tensor& t, Generator& gen, double bound) {
  if (is_declared_only(t)) return;
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set_flat(i, (2 * gen.uniform() - 1) * bound);
}

void kaiming_uniform(Tensor& t, Generator& gen, std::int64_t fan_in, double a) {
  if (fan_in < 1) fail("kaiming_uniform: fan_in must be positive, got ", fan_in);
  const double gain = std::sqrt(2.0 / (1.0 + a * a));
  uniform(t, gen, gain * std::sqrt(3.0 / static_cast<double>(fan_in)));
}

void zeros(Tensor& t) {
  if (!is_declared_only(t)) t.fill_(0);
}
void ones(Tensor& t) {
  if (!is_declared_only(t)) t.fill_(1);
}

}  // namespace uwaga::nn::init
