#include "data/pose/pose_batches.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/error.h"
#include "core/random.h"
#include "core/shape_ops.h"
#include "data/images/augment.h"
#include "nn/pose/keypoint_heatmaps.h"
#include "nn/loss.h"

namespace uwaga {

Batch make_pose_batch(const std::vector<PoseSample>& samples,
                      const HeatmapTargetOptions& targets) {
  if (samples.empty()) fail("make_pose_batch: no samples");
  const Shape image_shape = samples[0].image.shape();  // (C, H, W)
  const std::int64_t B = static_cast<std::int64_t>(samples.size());
  const std::int64_t K = samples[0].num_joints();
  const std::int64_t h = targets.height, w = targets.width;
  std::vector<Tensor> images, heatmaps;
  Tensor weights = Tensor::zeros({B, K});  // v (B, K)
  float* v = weights.data<float>();
  for (std::int64_t b = 0; b < B; ++b) {
    const PoseSample& s = samples[static_cast<std::size_t>(b)];
    if (s.image.shape() != image_shape || s.num_joints() != K)
      fail("make_pose_batch: sample ", b, " has an image ", shape_str(s.image.shape()), " and ",
           s.num_joints(), " joints, sample 0 ", shape_str(image_shape), " and ", K);
    images.push_back(s.image);
    heatmaps.push_back(
        nn::gaussian_heatmaps(s.x, s.y, s.visible, h, w, targets.stride, targets.sigma));
    for (std::int64_t k = 0; k < K; ++k) v[b * K + k] = s.visible[k] ? 1.0f : 0.0f;
  }
  weights.bump_version();
  return {{stack(images, 0)},  // (B, C, H, W)
          nn::pack_keypoint_targets(stack(heatmaps, 0), weights)};  // (B, K, 1 + h·w)
}

PoseBatches::PoseBatches(PoseSampleSource source, std::int64_t epoch_size,
                         std::int64_t batch_size, HeatmapTargetOptions targets, bool flip,
                         std::uint64_t seed)
    : source_(std::move(source)),
      epoch_size_(epoch_size),
      batch_size_(batch_size),
      targets_(targets),
      flip_(flip),
      seed_(seed) {
  if (!source_.sample || !source_.skeleton) fail("PoseBatches: the sample source is empty");
  if (batch_size_ < 1) fail("PoseBatches: batch_size must be at least 1, got ", batch_size_);
  if (epoch_size_ < batch_size_ || epoch_size_ > source_.size)
    fail("PoseBatches: an epoch of ", epoch_size_, " samples must hold one batch of ",
         batch_size_, " and at most the source's ", source_.size, " samples");
}

std::int64_t PoseBatches::batches_per_epoch() const { return epoch_size_ / batch_size_; }

void PoseBatches::begin_epoch(std::int64_t epoch) {
  // A generator of its own per epoch: batch i of epoch e depends only on (seed, e).
  Generator gen(derive_seed(seed_, static_cast<std::uint64_t>(epoch), 0));
  const std::int64_t first = (epoch * epoch_size_) % source_.size;
  order_.resize(static_cast<std::size_t>(epoch_size_));
  for (std::int64_t j = 0; j < epoch_size_; ++j)
    order_[static_cast<std::size_t>(j)] = (first + j) % source_.size;
  for (std::size_t i = order_.size() - 1; i > 0; --i)
    std::swap(order_[i], order_[gen.below(i + 1)]);
  flipped_.assign(order_.size(), false);
  if (flip_)
    for (std::size_t j = 0; j < order_.size(); ++j) flipped_[j] = gen.uniform() < 0.5;
}

Batch PoseBatches::batch(std::int64_t index) {
  if (index < 0 || index >= batches_per_epoch() || order_.empty())
    fail("PoseBatches: batch ", index, " of ", batches_per_epoch(), " (begin_epoch first)");
  std::vector<PoseSample> samples;
  for (std::int64_t j = index * batch_size_; j < (index + 1) * batch_size_; ++j) {
    PoseSample s = source_.sample(order_[static_cast<std::size_t>(j)]);
    if (flipped_[static_cast<std::size_t>(j)]) flip_horizontal(s, *source_.skeleton);
    samples.push_back(std::move(s));
  }
  return make_pose_batch(samples, targets_);
}

}  // namespace uwaga
