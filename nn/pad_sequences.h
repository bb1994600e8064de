#pragma once
// Ragged token-id sequences as one batch: what the translator's batches (data/translation) and
// its decoding (nn/decoding) both build, so it sits below both, apart from any model.
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace uwaga::nn {

// Ragged id sequences -> one (B, L) int64 tensor, L the longest, shorter rows filled with pad.
Tensor pad_sequences(const std::vector<std::vector<std::int64_t>>& sequences, std::int64_t pad);

}  // namespace uwaga::nn
