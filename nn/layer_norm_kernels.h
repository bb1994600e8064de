#pragma once
// The fast LayerNorm kernels: what nn::layer_norm runs (nn/layer_norm.h has the formula, the
// derivation and the plain loops these equal). This file is about speed: rows in blocks that stay
// in the L1 cache between the passes, vector lanes, the γ and β sums in blocks of features.
// tests/nn/test_layer_norm.cpp checks them against the plain loops.
#include <cstdint>

namespace uwaga::nn {

// rows × d, contiguous; the arguments as layer_norm_forward_reference's and
// layer_norm_backward_reference's (nn/layer_norm.h). Backward writes dx, dweight and dbias
// (null: not wanted).
template <class T>
void layer_norm_forward(T* out, T* mean, T* rstd, const T* x, const T* weight, const T* bias,
                        std::int64_t rows, std::int64_t d, double eps);
template <class T>
void layer_norm_backward(T* dx, T* dweight, T* dbias, const T* dout, const T* x, const T* weight,
                         const T* mean, const T* rstd, std::int64_t rows, std::int64_t d);

}  // namespace uwaga::nn
