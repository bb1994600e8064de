#pragma once
// Softmax cross-entropy from logits, as torch.nn.functional.cross_entropy:
//   logits (N, C), targets (N,) int64. With label smoothing ε the target distribution is
//   q = (1 − ε) onehot(t) + ε / C, and per row  ℓ = −Σ_c q_c log softmax(z)_c.
//   Rows whose target equals ignore_index count neither in the sum nor in the mean.
//   The result is the mean over counted rows (0 when no row counts).
//
// cross_entropy is one node with the hand-derived backward  dz = (softmax(z) − q) / n_counted;
// cross_entropy_composed builds the same loss from log_softmax, gather and mean.
#include <cstdint>

#include "core/tensor.h"

namespace uwaga::nn {

struct CrossEntropyOptions {
  std::int64_t ignore_index = -100;
  double label_smoothing = 0.0;
};

Tensor cross_entropy(const Tensor& logits, const Tensor& targets,
                     const CrossEntropyOptions& options = {});
Tensor cross_entropy_composed(const Tensor& logits, const Tensor& targets,
                              const CrossEntropyOptions& options = {});

}  // namespace uwaga::nn
