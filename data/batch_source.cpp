#include "data/batch_source.h"

#include "core/error.h"
#include "core/shape_ops.h"

namespace uwaga {

std::int64_t Batch::rows() const {
  if (!targets.defined() || targets.dim() == 0)
    fail("Batch: the targets must have a row dimension, got ",
         targets.defined() ? shape_str(targets.shape()) : std::string("none"));
  const std::int64_t b = targets.size(0);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined() || inputs[i].dim() == 0 || inputs[i].size(0) != b)
      fail("Batch: input ", i, " has shape ",
           inputs[i].defined() ? shape_str(inputs[i].shape()) : std::string("(undefined)"),
           " but the targets ", shape_str(targets.shape()), " have ", b, " rows");
  return b;
}

Batch Batch::rows(std::int64_t begin, std::int64_t end) const {
  Batch part;
  for (const Tensor& x : inputs) part.inputs.push_back(slice(x, 0, begin, end));
  part.targets = slice(targets, 0, begin, end);
  return part;
}

}  // namespace uwaga
