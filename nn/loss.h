#pragma once
// Loss: what the Trainer minimises, as a function of the model's output and the batch's targets.
// A loss is a mean over the targets it counts (rows of a batch; target words, not padding), so
// the loss of a whole batch is the count-weighted mean of its parts' losses:
//
//   L = Σ_c (n_c / n) L_c        n_c = count(targets of part c),  n = Σ_c n_c
//
// which is how the trainer splits a batch across replicas and micro-batches (data_parallel.h).
#include <cstdint>

#include "nn/cross_entropy.h"
#include "core/tensor.h"

namespace uwaga::nn {

class Loss {
 public:
  virtual ~Loss() = default;
  // The mean loss of `output` against `targets` (rows first): a scalar attached to the graph.
  virtual Tensor operator()(const Tensor& output, const Tensor& targets) const = 0;
  // How many targets the mean runs over.
  virtual std::int64_t count(const Tensor& targets) const = 0;
  // How many examples the targets are, for the progress line's items/s: what the mean runs over
  // (images, target words) unless a loss averages over parts of an example (a heatmap's cells).
  virtual std::int64_t items(const Tensor& targets) const { return count(targets); }
  // How many of them the output predicts right, or −1 where accuracy does not apply.
  virtual std::int64_t correct(const Tensor& /*output*/, const Tensor& /*targets*/) const {
    return -1;
  }
};

// Softmax cross-entropy (nn/cross_entropy.h) of logits (…, C) against class ids (…): every
// leading dimension is flattened into rows, (B, C) for a ViT's images, (B·T, V) for a translator's
// target words. Targets equal to ignore_index (padding) count nowhere. Float targets of the
// logits' shape are class probabilities (Mixup, CutMix: nn/soft_target_cross_entropy.h), with the
// same label smoothing; every row counts, and a row is right when the logits' arg-max is the
// target's.
class CrossEntropyLoss : public Loss {
 public:
  explicit CrossEntropyLoss(CrossEntropyOptions options = {}) : options_(options) {}
  Tensor operator()(const Tensor& logits, const Tensor& targets) const override;
  std::int64_t count(const Tensor& targets) const override;
  // Targets whose logit is the row's largest (arg-max).
  std::int64_t correct(const Tensor& logits, const Tensor& targets) const override;

 private:
  CrossEntropyOptions options_;
};

// Mean squared error over every element: mean((output − targets)²), same shapes.
class MeanSquaredError : public Loss {
 public:
  Tensor operator()(const Tensor& output, const Tensor& targets) const override;
  std::int64_t count(const Tensor& targets) const override { return targets.numel(); }
};

// Heatmap regression for keypoints: ViTPose's JointsMSELoss with use_target_weight,
//   L = mean over (b, k, i, j) of (w_bk (P_bkij − H_bkij))²
// P (B, K, h, w) the predicted heatmaps, H the Gaussian targets (nn/pose/keypoint_heatmaps.h), w_bk
// each joint's weight: its visibility, 0 or 1, for which (w (P − H))² = w (P − H)². As the
// reference, the weight multiplies both maps before squaring, there is no ½ factor (HRNet's
// original had one; mmpose's JointsMSELoss, which ViTPose uses, does not), and the mean runs over
// all B·K·h·w cells, those of weight 0 included: count(targets) = B·K·h·w, so a batch split into
// parts recombines exactly (L = Σ_c (n_c / n) L_c).
//
// The Batch has one targets tensor, so H and w travel packed (pack_keypoint_targets):
//   targets (B, K, 1 + h·w):  [b, k, 0] = w_bk,  [b, k, 1 + i·w + j] = H_bkij
class KeypointMSELoss : public Loss {
 public:
  // output (B, K, h, w), targets (B, K, 1 + h·w) of the same dtype.
  Tensor operator()(const Tensor& output, const Tensor& targets) const override;
  std::int64_t count(const Tensor& targets) const override;  // B·K·h·w
  std::int64_t items(const Tensor& targets) const override;  // B: samples, not cells
};

// heatmaps (B, K, h, w) and weights (B, K) → targets (B, K, 1 + h·w) in heatmaps' dtype.
Tensor pack_keypoint_targets(const Tensor& heatmaps, const Tensor& weights);

struct KeypointTargets {
  Tensor heatmaps;  // (B, K, h, w)
  Tensor weights;   // (B, K)
};
// The inverse of pack_keypoint_targets (copies).
KeypointTargets unpack_keypoint_targets(const Tensor& targets, std::int64_t heatmap_h,
                                        std::int64_t heatmap_w);

}  // namespace uwaga::nn
