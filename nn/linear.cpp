#include "nn/linear.h"

#include "core/matmul.h"
#include "nn/init.h"

namespace uwaga::nn {

void LinearOptions::validate() const {
  if (in < 1) fail("LinearOptions: in must be positive, got ", in);
  if (out < 1) fail("LinearOptions: out must be positive, got ", out);
}

Linear::Linear(const LinearOptions& o, Generator& gen) : options(o) {
  o.validate();
  weight = register_parameter("weight", Tensor::empty({o.out, o.in}));
  init::trunc_normal(weight, gen, 0.02);
  if (o.bias) bias = register_parameter("bias", Tensor::zeros({o.out}));
}

Tensor Linear::forward(const Tensor& x) const { return linear(x, weight, bias); }

}  // namespace uwaga::nn
