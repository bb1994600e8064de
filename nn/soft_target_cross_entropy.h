#pragma once
// Cross-entropy against probability targets — the loss of Mixup and CutMix (data/images/mixup.h), whose
// targets are blends of two one-hot rows (timm's SoftTargetCrossEntropy):
//   logits z (N, C), targets q (N, C) with rows on the simplex; label smoothing ε first replaces
//   q by (1 − ε) q + ε / C; then per row ℓ = −Σ_c q_c log softmax(z)_c and L = (1/N) Σ_rows ℓ.
// With one-hot targets this is nn/cross_entropy's loss.
//
// soft_target_cross_entropy is one node with the hand-derived backward; the _composed version
// builds the same loss from log_softmax, multiply and mean.
#include "core/tensor.h"

namespace uwaga::nn {

Tensor soft_target_cross_entropy(const Tensor& logits, const Tensor& targets,
                                 double label_smoothing = 0.0);
Tensor soft_target_cross_entropy_composed(const Tensor& logits, const Tensor& targets,
                                          double label_smoothing = 0.0);

}  // namespace uwaga::nn
