#pragma once
// Reading attention maps (for the pictures of where a ViT looks).
//
// class_token_attention: the class token's row of A, averaged over heads, over the patches:
//   a_n = (1/h) Σ_heads A[0, n],  n = 1…N.
// attention_rollout (Abnar & Zuidema, 2020): attention flows through the residual connections
// too, so each layer's head-averaged map is mixed with the identity and re-normalised,
//   Â_ℓ = rownorm(½ Ā_ℓ + ½ I),   R = Â_L ⋯ Â_2 Â_1,
// and R[0, n] says how much patch n reaches the class token through all L layers.
#include <vector>

#include "core/tensor.h"

namespace uwaga::nn {

// A (B, h, T, T) -> (B, T−1): the class token's attention to each patch, mean over heads.
Tensor class_token_attention(const Tensor& A);
// One A (B, h, T, T) per layer, first layer first -> R (B, T, T).
Tensor attention_rollout(const std::vector<Tensor>& maps);

}  // namespace uwaga::nn
