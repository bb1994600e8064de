#include "nn/mlp.h"

namespace uwaga::nn {

void MLPOptions::validate() const {
  if (dim < 1) fail("MLPOptions: dim must be positive, got ", dim);
  if (hidden < 1) fail("MLPOptions: hidden must be positive, got ", hidden);
}

MLP::MLP(const MLPOptions& o, Generator& gen) : act(o.gelu) {
  o.validate();
  fc1 = register_module("fc1",
                        std::make_shared<Linear>(LinearOptions{.in = o.dim, .out = o.hidden}, gen));
  fc2 = register_module("fc2",
                        std::make_shared<Linear>(LinearOptions{.in = o.hidden, .out = o.dim}, gen));
}

Tensor MLP::forward(const Tensor& x) const { return fc2->forward(act.forward(fc1->forward(x))); }

}  // namespace uwaga::nn
