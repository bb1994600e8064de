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
  weight = register_parameter("weight", {o.out, o.in}, [&](Tensor& w) { init::trunc_normal(w, gen, 0.02); });
  if (o.bias) bias = register_parameter("bias", {o.out}, init::zeros);
}

Tensor Linear::forward(const Tensor& x) const { return linear(x, weight, bias); }

Tensor Linear::forward_batch(const std::vector<Tensor>& inputs) {
  expect_inputs(inputs, 1, "Linear", "x (B, in)");
  return forward(inputs[0]);
}

std::shared_ptr<Model> Linear::replica() const {
  return in_my_dtype(built_to_load<Linear>(options));  // its values are the model's
}

}  // namespace uwaga::nn
