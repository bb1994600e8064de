#include "nn/pad_sequences.h"

#include <algorithm>

namespace uwaga::nn {

Tensor pad_sequences(const std::vector<std::vector<std::int64_t>>& sequences, std::int64_t pad) {
  std::size_t L = 0;
  for (const auto& s : sequences) L = std::max(L, s.size());
  const auto B = static_cast<std::int64_t>(sequences.size());
  Tensor out = Tensor::full({B, static_cast<std::int64_t>(L)}, static_cast<double>(pad),
                            DType::Int64);
  std::int64_t* p = out.data<std::int64_t>();
  for (std::size_t b = 0; b < sequences.size(); ++b)
    std::copy(sequences[b].begin(), sequences[b].end(), p + b * L);
  return out;
}

}  // namespace uwaga::nn
