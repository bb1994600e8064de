#pragma once
// Model: a Module the Trainer can train on its own. The trainer knows nothing of images or
// sentences: it hands the model a batch's inputs as the data gives them, and on N threads it
// trains N replicas of the model, each on its share of the batch (optim/data_parallel.h).
#include <cstdint>
#include <memory>
#include <vector>

#include "nn/module.h"

namespace uwaga::nn {

class Dropout;

class Model : public Module {
 public:
  // The model's output for a batch's inputs, each (B, …) with the batch's rows first — the
  // arguments of the model's own forward(): (images) for a ViT, (src, tgt_in) for a translator.
  // Checks how many inputs it was given and names the model when they do not fit.
  virtual Tensor forward_batch(const std::vector<Tensor>& inputs) = 0;

  // A new model of the same architecture and dtype for another thread's replica. Its initial
  // values are never used: alias_parameters() points them at this model's.
  virtual std::shared_ptr<Model> replica() const = 0;

  // Reseeds every Dropout in the model, so the masks of a micro-batch depend only on (seed, which
  // rows) and not on which replica or thread runs it: the n-th Dropout (in named_modules() order)
  // gets seed + n·0x9E3779B97F4A7C15.
  void seed_dropout(std::uint64_t seed);

 protected:
  // Fails naming `model` and the expected `names` ("images") unless there are `count` inputs.
  static void expect_inputs(const std::vector<Tensor>& inputs, std::size_t count,
                            const char* model, const char* names);
  // `fresh`, converted to this model's dtype (a model built in float32 and trained in float64
  // for a gradient check has float64 replicas).
  std::shared_ptr<Model> in_my_dtype(std::shared_ptr<Model> fresh) const;

 private:
  std::vector<Dropout*> dropouts_;  // found on the first seed_dropout (the tree does not change)
  bool dropouts_found_ = false;
};

}  // namespace uwaga::nn
