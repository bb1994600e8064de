#include "nn/loss.h"

#include "core/elementwise.h"
#include "core/error.h"
#include "core/reduction.h"
#include "core/shape_ops.h"

namespace uwaga::nn {
namespace {

// (…, C) logits and (…) targets as (N, C) and (N,).
std::pair<Tensor, Tensor> as_rows(const Tensor& logits, const Tensor& targets) {
  if (logits.dim() < 2 || logits.dim() != targets.dim() + 1 || logits.numel() == 0 ||
      logits.numel() / logits.size(-1) != targets.numel())
    fail("CrossEntropyLoss: logits ", shape_str(logits.shape()), " and targets ",
         shape_str(targets.shape()), " do not fit: expected logits (…, C) and targets (…)");
  const std::int64_t rows = targets.numel();
  return {logits.dim() == 2 ? logits : reshape(logits, {rows, logits.size(-1)}),
          targets.dim() == 1 ? targets : reshape(targets, {rows})};
}

}  // namespace

Tensor CrossEntropyLoss::operator()(const Tensor& logits, const Tensor& targets) const {
  const auto [z, t] = as_rows(logits, targets);
  return cross_entropy(z, t, options_);
}

std::int64_t CrossEntropyLoss::count(const Tensor& targets) const {
  std::int64_t n = 0;
  for (std::int64_t t : targets.to_indices()) n += t != options_.ignore_index;
  return n;
}

std::int64_t CrossEntropyLoss::correct(const Tensor& logits, const Tensor& targets) const {
  const auto [z, t] = as_rows(logits, targets);
  const std::vector<std::int64_t> predicted = argmax(z, 1).to_indices();
  const std::vector<std::int64_t> truth = t.to_indices();
  std::int64_t right = 0;
  for (std::size_t i = 0; i < truth.size(); ++i)
    right += truth[i] != options_.ignore_index && predicted[i] == truth[i];
  return right;
}

Tensor MeanSquaredError::operator()(const Tensor& output, const Tensor& targets) const {
  if (output.shape() != targets.shape())
    fail("MeanSquaredError: output ", shape_str(output.shape()), " and targets ",
         shape_str(targets.shape()), " differ in shape");
  const Tensor diff = output - targets;
  return mean(diff * diff);
}

}  // namespace uwaga::nn
