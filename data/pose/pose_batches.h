#pragma once
// The keypoint model's batches: PoseSamples (data/pose/keypoints.h) as the images the model reads and
// the heatmaps it should write. For samples s_1 … s_B and a heatmap grid of h × w cells at stride
// s input pixels:
//
//   inputs   images (B, C, H, W), each sample's image as it is (values in [0, 1])
//   targets  pack_keypoint_targets(H (B, K, h, w), v (B, K))                     (nn/loss.h)
//            H_bk = gaussian_heatmaps(joint k of s_b, σ) (nn/pose/keypoint_heatmaps.h), v_bk its
//            visibility, the loss's weight: a hidden or unlabelled joint is not trained on
//
// PoseBatches is the training BatchSource. An epoch shows epoch_size samples — with a source as
// large as the whole run (synthetic figures, made on the fly), epoch e shows its own samples
// e·n … e·n + n − 1, new ones every epoch; with a smaller source (COCO) the indices wrap around,
// so every epoch sees the same samples — shuffled with (seed, epoch), each mirrored left-right
// with probability ½ when flipping is on (flip_horizontal: the image's columns reversed and the
// left and right joints swapped). Batch i of epoch e depends only on (seed, e, i).
#include <cstdint>
#include <functional>
#include <vector>

#include "data/batch_source.h"
#include "data/pose/keypoints.h"

namespace uwaga {

// Where pose samples come from, whatever makes them (StickFigures, CocoKeypoints): how many,
// their skeleton and sample i, which must depend on i alone.
struct PoseSampleSource {
  std::int64_t size = 0;
  const SkeletonSpec* skeleton = nullptr;
  std::function<PoseSample(std::int64_t)> sample;
};

// The source of anything with size(), skeleton() and sample(i); `samples` must outlive it.
template <class Samples>
PoseSampleSource pose_sample_source(const Samples& samples) {
  return {samples.size(), &samples.skeleton(), [&samples](std::int64_t i) {
            return samples.sample(i);
          }};
}

// The heatmaps a model of stride `stride` writes: h × w cells of `stride` input pixels, one
// Gaussian of σ = `sigma` cells per joint.
struct HeatmapTargetOptions {
  std::int64_t height = 0, width = 0;  // h, w
  float stride = 1;                    // s
  float sigma = 1.5f;                  // σ, in cells
};

// `samples` as a batch: inputs {images (B, C, H, W)}, targets (B, K, 1 + h·w) as above. The
// samples must share one image size and joint count (an error names the first that differs).
Batch make_pose_batch(const std::vector<PoseSample>& samples, const HeatmapTargetOptions& targets);

class PoseBatches : public BatchSource {
 public:
  // epoch_size: samples per epoch (the last, partial batch dropped), at most source.size.
  PoseBatches(PoseSampleSource source, std::int64_t epoch_size, std::int64_t batch_size,
              HeatmapTargetOptions targets, bool flip, std::uint64_t seed);

  std::int64_t batches_per_epoch() const override;
  void begin_epoch(std::int64_t epoch) override;
  Batch batch(std::int64_t index) override;

 private:
  PoseSampleSource source_;
  std::int64_t epoch_size_, batch_size_;
  HeatmapTargetOptions targets_;
  bool flip_;
  std::uint64_t seed_;
  std::vector<std::int64_t> order_;  // this epoch's sample indices, in the order shown
  std::vector<bool> flipped_;        // whether sample order_[j] is shown mirrored
};

}  // namespace uwaga
