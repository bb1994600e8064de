#include "nn/positional_encoding.h"

#include <cmath>

#include "core/elementwise.h"
#include "core/shape_ops.h"
#include "nn/init.h"

namespace uwaga::nn {

Tensor sinusoidal_positional_encoding(std::int64_t length, std::int64_t dim, DType dtype) {
  if (length < 0 || dim < 1)
    fail("sinusoidal_positional_encoding: length ", length, " and dim ", dim, " are invalid");
  if (dtype != DType::Float32 && dtype != DType::Float64)
    fail("sinusoidal_positional_encoding: sines need float32 or float64, got ", dtype_name(dtype));
  Tensor pe = Tensor::empty({length, dim}, dtype);
  for (std::int64_t pos = 0; pos < length; ++pos)
    for (std::int64_t j = 0; j < dim; ++j) {
      const double angle =
          static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(j - j % 2) / dim);
      pe.set({pos, j}, j % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  return pe;
}

LearnedPositionalEmbedding::LearnedPositionalEmbedding(std::int64_t max_length, std::int64_t dim,
                                                       Generator& gen) {
  if (max_length < 1 || dim < 1)
    fail("LearnedPositionalEmbedding: max_length ", max_length, " and dim ", dim,
         " must be positive");
  weight = register_parameter("weight", {max_length, dim}, [&](Tensor& w) { init::trunc_normal(w, gen, 0.02); });
}

Tensor LearnedPositionalEmbedding::forward(const Tensor& x) const {
  if (x.dim() != 3 || x.size(2) != weight.size(1))
    fail("LearnedPositionalEmbedding: input ", shape_str(x.shape()), " should be (B, T, ",
         weight.size(1), ")");
  if (x.size(1) > weight.size(0))
    fail("LearnedPositionalEmbedding: sequence length ", x.size(1), " exceeds the maximum ",
         weight.size(0));
  return x + slice(weight, 0, 0, x.size(1));
}

}  // namespace uwaga::nn
