// Your C++ exercises: replace each `throw NotImplemented(...)` with the function (exercises.h says
// what each computes), then build and run the checks:
//   cmake --build build --target uwaga-exercises && ./build/notebooks/exercises/cpp/uwaga-exercises
// `uwaga-exercises softmax` runs one check. Hints: notebooks/08_exercises.ipynb (the same
// exercises in Python); a solution: solutions.cpp beside this file — try first.
#include "notebooks/exercises/cpp/exercises.h"

#include <cmath>

#include "core/elementwise.h"
#include "core/matmul.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "nn/cross_entropy.h"

namespace uwaga::exercises {

Tensor softmax(const Tensor& E) {
  throw NotImplemented("softmax");  // your code here
}

Tensor softmax_backward(const Tensor& A, const Tensor& dA) {
  throw NotImplemented("softmax_backward");  // your code here
}

Tensor attention(const Tensor& Q, const Tensor& K, const Tensor& V) {
  throw NotImplemented("attention");  // your code here
}

Tensor causal_attention(const Tensor& Q, const Tensor& K, const Tensor& V) {
  throw NotImplemented("causal_attention");  // your code here
}

LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& gamma, const Tensor& dy) {
  throw NotImplemented("layer_norm_backward");  // your code here
}

Tensor split_heads(const Tensor& x, std::int64_t heads) {
  throw NotImplemented("split_heads");  // your code here
}

Tensor merge_heads(const Tensor& y) {
  throw NotImplemented("merge_heads");  // your code here
}

Tensor block_forward(const Tensor& z, nn::TransformerEncoderBlock& block) {
  throw NotImplemented("block_forward");  // your code here
}

Tensor patchify(const Tensor& images, std::int64_t P) {
  throw NotImplemented("patchify");  // your code here
}

double train_step(nn::VisionTransformer& model, optim::Optimizer& optimizer, const Tensor& images,
                  const Tensor& labels) {
  throw NotImplemented("train_step");  // your code here
}

std::int64_t greedy(const std::vector<double>& logits) {
  throw NotImplemented("greedy");  // your code here
}

std::vector<double> top_k_probabilities(const std::vector<double>& logits, std::int64_t k,
                                        double temperature) {
  throw NotImplemented("top_k_probabilities");  // your code here
}

Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets) {
  throw NotImplemented("cross_entropy_backward");  // your code here
}

AttentionGrads attention_backward(const Tensor& Q, const Tensor& K, const Tensor& V,
                                  const Tensor& dY) {
  throw NotImplemented("attention_backward");  // your code here
}

}  // namespace uwaga::exercises
