#pragma once
// Part 4 of uwaga-walkthrough, the backward pass of one self-attention layer written out, and its
// check against autograd: each intermediate gradient in the order the pass computes it, so that
// a mistake is named where it is made (tests/apps/test_walkthrough_backward.cpp plants some).
#include <cstdint>

#include "apps/walkthrough/attention_steps.h"
#include "core/tensor.h"
#include "nn/self_attention.h"

namespace uwaga::walkthrough {

struct AttentionGradients {
  Tensor dY;                // (N, d_v) given: ∂L/∂Y
  Tensor dA, dV;            // (N, N), (N, d_v)
  Tensor dE;                // (N, N)
  Tensor dQ, dK;            // (N, d_k)
  Tensor dW_Q, dW_K, dW_V;  // (D, d_k), (D, d_k), (D, d_v)
  Tensor dX;                // (N, D)
};

// The chain rule through each line of the forward pass, last line first (g.dY given).
void output_backward(AttentionGradients& g, const AttentionSteps& s);      // dA, dV
void softmax_backward(AttentionGradients& g, const AttentionSteps& s);     // dE
void scores_backward(AttentionGradients& g, const AttentionSteps& s);      // dQ, dK
void projections_backward(AttentionGradients& g, const Tensor& X, const Tensor& W_Q,
                          const Tensor& W_K, const Tensor& W_V);           // dW_•, dX

// What autograd computes for every gradient of g: dA … dK by running each forward step's backward
// on copies of its inputs, fed autograd's own gradient of the step after it; dW_• and dX from
// layer.forward(X).backward(dY) (the library's layer, in one call). s is layer's forward on X.
AttentionGradients autograd_gradients(const AttentionSteps& s, const Tensor& X,
                                      nn::SelfAttention& layer, const Tensor& dY, bool causal);

// Prints a check line for each gradient, in the order the backward pass computes them (dA, dV,
// dE, dQ, dK, dW_Q, dW_K, dW_V, dX), and fails (uwaga::Error) at the first that differs from
// autograd's by 1e-12 or more, naming it: the gradients after it are computed from it, so they
// are wrong too, and the mistake is in its own line.
void check_against_autograd(const AttentionGradients& mine, const AttentionGradients& autograd);

}  // namespace uwaga::walkthrough
