#include "nn/embedding.h"

#include "core/indexing.h"
#include "nn/init.h"

namespace uwaga::nn {

Embedding::Embedding(std::int64_t num_embeddings, std::int64_t dim, Generator& gen) {
  if (num_embeddings < 1 || dim < 1)
    fail("Embedding: num_embeddings ", num_embeddings, " and dim ", dim, " must be positive");
  weight = register_parameter("weight", {num_embeddings, dim}, [&](Tensor& w) { init::trunc_normal(w, gen, 0.02); });
}

Tensor Embedding::forward(const Tensor& ids) const { return embedding(weight, ids); }

}  // namespace uwaga::nn
