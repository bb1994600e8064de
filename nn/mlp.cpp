#include "nn/mlp.h"

namespace uwaga::nn {

MLP::MLP(std::int64_t dim, std::int64_t hidden, Generator& gen, GeluApproximation approximate)
    : act(approximate) {
  fc1 = register_module("fc1",
                        std::make_shared<Linear>(LinearOptions{.in = dim, .out = hidden}, gen));
  fc2 = register_module("fc2",
                        std::make_shared<Linear>(LinearOptions{.in = hidden, .out = dim}, gen));
}

Tensor MLP::forward(const Tensor& x) const { return fc2->forward(act.forward(fc1->forward(x))); }

}  // namespace uwaga::nn
