#include "nn/loss.h"

#include "core/elementwise.h"
#include "core/error.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "nn/soft_target_cross_entropy.h"

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

// Probability targets (Mixup, CutMix): float, the logits' shape.
bool soft(const Tensor& targets) {
  return targets.defined() && (targets.dtype() == DType::Float32 || targets.dtype() == DType::Float64);
}

// (…, C) logits and (…, C) probability targets as (N, C) each.
std::pair<Tensor, Tensor> soft_rows(const Tensor& logits, const Tensor& targets) {
  if (logits.dim() < 2 || targets.shape() != logits.shape() || logits.numel() == 0)
    fail("CrossEntropyLoss: logits ", shape_str(logits.shape()), " and probability targets ",
         shape_str(targets.shape()), " do not fit: expected the same shape (…, C)");
  const std::int64_t C = logits.size(-1), rows = logits.numel() / C;
  return {reshape(logits, {rows, C}), reshape(targets, {rows, C})};
}

}  // namespace

Tensor CrossEntropyLoss::operator()(const Tensor& logits, const Tensor& targets) const {
  if (soft(targets)) {
    const auto [z, q] = soft_rows(logits, targets);
    return soft_target_cross_entropy(z, q.dtype() == z.dtype() ? q : q.to(z.dtype()),
                                     options_.label_smoothing);
  }
  const auto [z, t] = as_rows(logits, targets);
  return cross_entropy(z, t, options_);
}

std::int64_t CrossEntropyLoss::count(const Tensor& targets) const {
  if (soft(targets)) return targets.dim() >= 1 ? targets.numel() / targets.size(-1) : 0;
  std::int64_t n = 0;
  for (std::int64_t t : targets.to_indices()) n += t != options_.ignore_index;
  return n;
}

std::int64_t CrossEntropyLoss::correct(const Tensor& logits, const Tensor& targets) const {
  if (soft(targets)) {  // the class the target weighs most (each image's own under mixing)
    const auto [z, q] = soft_rows(logits, targets);
    const std::vector<std::int64_t> predicted = argmax(z, 1).to_indices();
    const std::vector<std::int64_t> truth = argmax(q, 1).to_indices();
    std::int64_t right = 0;
    for (std::size_t i = 0; i < truth.size(); ++i) right += predicted[i] == truth[i];
    return right;
  }
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

Tensor KeypointMSELoss::operator()(const Tensor& output, const Tensor& targets) const {
  check_defined(output, "KeypointMSELoss");
  check_defined(targets, "KeypointMSELoss");
  if (output.dim() != 4 || targets.dim() != 3 || targets.size(0) != output.size(0) ||
      targets.size(1) != output.size(1) ||
      targets.size(2) != 1 + output.size(2) * output.size(3))
    fail("KeypointMSELoss: output ", shape_str(output.shape()), " and targets ",
         shape_str(targets.shape()), " do not fit: expected output (B, K, h, w) and targets "
         "(B, K, 1 + h·w) (nn/loss.h)");
  check_same_dtype(output, targets, "KeypointMSELoss");
  const std::int64_t B = output.size(0), K = output.size(1);
  const auto [heatmaps, weights] = unpack_keypoint_targets(targets, output.size(2), output.size(3));
  const Tensor diff = (output - heatmaps) * reshape(weights, {B, K, 1, 1});  // (B, K, h, w)
  return mean(diff * diff);
}

std::int64_t KeypointMSELoss::count(const Tensor& targets) const {
  if (targets.dim() != 3 || targets.size(2) < 2)
    fail("KeypointMSELoss: targets must be (B, K, 1 + h·w), got shape ",
         shape_str(targets.shape()));
  return targets.size(0) * targets.size(1) * (targets.size(2) - 1);
}

std::int64_t KeypointMSELoss::items(const Tensor& targets) const {
  count(targets);  // checks the shape
  return targets.size(0);
}

Tensor pack_keypoint_targets(const Tensor& heatmaps, const Tensor& weights) {
  check_defined(heatmaps, "pack_keypoint_targets");
  check_defined(weights, "pack_keypoint_targets");
  if (heatmaps.dim() != 4 || weights.dim() != 2 || weights.size(0) != heatmaps.size(0) ||
      weights.size(1) != heatmaps.size(1) || heatmaps.numel() == 0)
    fail("pack_keypoint_targets: heatmaps ", shape_str(heatmaps.shape()), " and weights ",
         shape_str(weights.shape()), " do not fit: expected (B, K, h, w) and (B, K)");
  check_float(heatmaps, "pack_keypoint_targets");
  const std::int64_t B = heatmaps.size(0), K = heatmaps.size(1);
  return cat({reshape(weights.detach().to(heatmaps.dtype()), {B, K, 1}),
              reshape(heatmaps.detach(), {B, K, heatmaps.size(2) * heatmaps.size(3)})},
             2);  // (B, K, 1 + h·w)
}

KeypointTargets unpack_keypoint_targets(const Tensor& targets, std::int64_t heatmap_h,
                                        std::int64_t heatmap_w) {
  check_defined(targets, "unpack_keypoint_targets");
  if (targets.dim() != 3 || heatmap_h < 1 || heatmap_w < 1 || heatmap_h >= targets.size(2) ||
      heatmap_w >= targets.size(2) || targets.size(2) != 1 + heatmap_h * heatmap_w)
    fail("unpack_keypoint_targets: targets ", shape_str(targets.shape()), " do not hold ",
         heatmap_h, " × ", heatmap_w, " heatmaps: expected (B, K, 1 + ", heatmap_h, "·",
         heatmap_w, ")");
  const std::int64_t B = targets.size(0), K = targets.size(1);
  return {reshape(slice(targets, 2, 1, 1 + heatmap_h * heatmap_w), {B, K, heatmap_h, heatmap_w}),
          reshape(slice(targets, 2, 0, 1), {B, K})};
}

}  // namespace uwaga::nn
