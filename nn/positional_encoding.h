#pragma once
// Positional information: attention itself is blind to order (permuting the inputs permutes the
// outputs), so each position gets a vector added to its token embedding.
#include "core/random.h"
#include "nn/module.h"

namespace uwaga::nn {

// The fixed encodings of "Attention Is All You Need":
//   PE(pos, 2i) = sin(pos / 10000^(2i/D)),   PE(pos, 2i+1) = cos(pos / 10000^(2i/D))
// Returns (length, D); no parameters.
Tensor sinusoidal_positional_encoding(std::int64_t length, std::int64_t dim,
                                      DType dtype = DType::Float32);

// Learned position embeddings: weight (max_length, D), init trunc-normal(0, 0.02).
// forward(x (B, T, D)) = x + weight[:T].
class LearnedPositionalEmbedding : public Module {
 public:
  LearnedPositionalEmbedding(std::int64_t max_length, std::int64_t dim, Generator& gen);
  Tensor forward(const Tensor& x) const;

  Tensor weight;  // (max_length, D)
};

}  // namespace uwaga::nn
