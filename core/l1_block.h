#pragma once
// The block of rows for loops that pass over a block more than once — LayerNorm's statistics and
// then its outputs, the softmax's maxima, exponentials and sums: a row of a small model is a few
// vectors long, so each pass runs over a whole block of independent rows (their work overlaps),
// and the block is small enough that each later pass finds its rows still in the L1 cache.
#include <algorithm>
#include <cstdint>

namespace uwaga {

// How many rows of `row_bytes` bytes each fit 16 KiB of the L1 cache, between 1 and 64.
inline std::int64_t l1_block_rows(std::int64_t row_bytes) {
  return std::clamp<std::int64_t>(16384 / std::max<std::int64_t>(row_bytes, 1), 1, 64);
}

}  // namespace uwaga
