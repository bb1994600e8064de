#pragma once
// softmax and log_softmax along one dim, each in two forms:
//   - softmax / log_softmax: one autograd node with a hand-derived backward (the default);
//   - softmax_composed / log_softmax_composed: built from max, sub, exp, sum, div, log, so
//     autograd derives the gradient; tests check that both forms agree.
#include "core/tensor.h"

namespace uwaga::nn {

// y_i = exp(x_i - max x) / Σ_j exp(x_j - max x). A row of only −∞ gives NaN (0/0), as in
// PyTorch; masked attention handles fully masked rows itself.
Tensor softmax(const Tensor& x, std::int64_t dim);
// y_i = x_i - max x - log Σ_j exp(x_j - max x)
Tensor log_softmax(const Tensor& x, std::int64_t dim);

Tensor softmax_composed(const Tensor& x, std::int64_t dim);
Tensor log_softmax_composed(const Tensor& x, std::int64_t dim);

// The row kernels of the fused softmax: `rows` rows of length n, contiguous. They are the plain
// loops themselves (nn/softmax.cpp, llm.c's softmax_forward), with no tuned version beside them.
// Attention has its own masked, tuned version of both (masked_softmax_rows and the dE step of
// nn/attention_kernels.cpp), with its plain loop in nn/scaled_dot_product_attention.cpp.
//   forward:  y = softmax(x)
//   backward: dx = y ⊙ (dy − Σ_j dy_j y_j)   (adds into dx when accumulate is true)
template <class T> void softmax_rows_forward(T* y, const T* x, std::int64_t rows, std::int64_t n);
template <class T>
void softmax_rows_backward(T* dx, const T* dy, const T* y, std::int64_t rows, std::int64_t n,
                           bool accumulate);

}  // namespace uwaga::nn
