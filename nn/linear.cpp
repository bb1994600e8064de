#include "nn/linear.h"

#include "core/matmul.h"
#include "nn/init.h"

namespace uwaga::nn {

Linear::Linear(std::int64_t in_features, std::int64_t out_features, Generator& gen, bool has_bias) {
  if (in_features < 1 || out_features < 1)
    fail("Linear: in_features ", in_features, " and out_features ", out_features,
         " must be positive");
  weight = register_parameter("weight", Tensor::empty({out_features, in_features}));
  init::trunc_normal(weight, gen, 0.02);
  if (has_bias) bias = register_parameter("bias", Tensor::zeros({out_features}));
}

Tensor Linear::forward(const Tensor& x) const { return linear(x, weight, bias); }

Tensor Linear::forward_batch(const std::vector<Tensor>& inputs) {
  expect_inputs(inputs, 1, "Linear", "x (B, in)");
  return forward(inputs[0]);
}

std::shared_ptr<Model> Linear::replica() const {
  Generator unused(0);  // a replica's initial values are replaced by the model's
  return in_my_dtype(
      std::make_shared<Linear>(weight.size(1), weight.size(0), unused, bias.defined()));
}

}  // namespace uwaga::nn
