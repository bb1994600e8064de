#pragma once
// Stochastic depth (Huang et al. 2016), "drop path" in timm: in training, each example's residual
// branch is dropped with probability p — the whole branch, for that example — and kept branches
// are scaled by 1/(1 − p), so E[y] = x; evaluation is the identity:
//   y_b = x_b · m_b,  m_b = 0 with probability p, else 1/(1 − p),  one m_b per row b of x (B, …).
// In an encoder block it multiplies the attention's and the MLP's outputs before they are added
// to the residual stream (nn/transformer_encoder_block.h).
//   drop_path: the op, one node with the hand-derived backward (the same per-row mask);
//   DropPath:  the module; a kind of Dropout (of whole rows), so Model::seed_dropout reseeds its
//              generator with the others' and masks depend only on (step seed, rows).
#include <cstdint>

#include "core/random.h"
#include "core/tensor.h"
#include "nn/dropout.h"

namespace uwaga::nn {

Tensor drop_path(const Tensor& x, double p, bool training, Generator& gen);

class DropPath : public Dropout {
 public:
  explicit DropPath(double p, std::uint64_t seed = 0) : Dropout(p, seed) {}
  Tensor forward(const Tensor& x);  // drop_path(x, p(), is_training(), generator())
};

}  // namespace uwaga::nn
