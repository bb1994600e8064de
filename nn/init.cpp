#include "nn/init.h"

#include <cmath>

namespace uwaga::nn::init {

void trunc_normal(Tensor& t, Generator& gen, double std) {
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    double v;
    do v = gen.normal();
    while (std::abs(v) > 2.0);
    t.set_flat(i, v * std);
  }
}

void normal(Tensor& t, Generator& gen, double std) {
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set_flat(i, gen.normal() * std);
}

void uniform(Tensor& t, Generator& gen, double bound) {
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set_flat(i, (2 * gen.uniform() - 1) * bound);
}

void zeros(Tensor& t) { t.fill_(0); }
void ones(Tensor& t) { t.fill_(1); }

}  // namespace uwaga::nn::init
