#pragma once
// Embedding: a table of vectors looked up by integer id. weight (num_embeddings, dim).
// Init: weight ~ trunc-normal(0, 0.02).
#include "core/random.h"
#include "nn/module.h"

namespace uwaga::nn {

class Embedding : public Module {
 public:
  Embedding(std::int64_t num_embeddings, std::int64_t dim, Generator& gen);
  Tensor forward(const Tensor& ids) const;  // int64 (...) -> (..., dim)

  Tensor weight;  // (num_embeddings, dim)
};

}  // namespace uwaga::nn
