#pragma once
// Evaluating a model for the duration of a scope: eval mode (dropout off, BatchNorm on its
// running statistics) and no graph recorded; the model's training flag comes back when the scope
// ends, on an exception too.
//   {
//     const nn::InferenceScope inference(model);
//     Tensor logits = model.forward(images);
//   }
#include "core/graph.h"
#include "nn/module.h"

namespace uwaga::nn {

class InferenceScope {
 public:
  explicit InferenceScope(Module& model) : model_(model), was_training_(model.is_training()) {
    model_.eval();
  }
  ~InferenceScope() { model_.train(was_training_); }
  InferenceScope(const InferenceScope&) = delete;
  InferenceScope& operator=(const InferenceScope&) = delete;

 private:
  Module& model_;
  bool was_training_;
  NoGradGuard no_grad_;
};

}  // namespace uwaga::nn
