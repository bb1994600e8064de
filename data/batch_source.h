#pragma once
// BatchSource: where the Trainer gets its batches. An epoch is batches_per_epoch() batches;
// begin_epoch(e) fixes the epoch's order (a seeded shuffle), batch(i) builds batch i of it.
//
// Exact resume rests on one promise: batch i of epoch e depends only on (the source's seed, e, i)
// — no clock, no generator shared with anything else — so a run resumed at (e, i) sees the batches
// an uninterrupted run would have seen.
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace uwaga {

// One step's examples, rows first: row r of every input and of the targets is example r.
struct Batch {
  std::vector<Tensor> inputs;  // the model's forward() arguments, each (B, …)
  Tensor targets;              // (B, …) what the loss compares the output with

  std::int64_t rows() const;
  // Rows [begin, end) of every input and of the targets (views, no copies).
  Batch rows(std::int64_t begin, std::int64_t end) const;
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual std::int64_t batches_per_epoch() const = 0;
  virtual void begin_epoch(std::int64_t epoch) = 0;
  virtual Batch batch(std::int64_t index) = 0;  // of the epoch begun last
};

}  // namespace uwaga
