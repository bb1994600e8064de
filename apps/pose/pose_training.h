#pragma once
// One uwaga-pose training run, set up the one way `uwaga-pose train` uses: ViTPose on keypoint
// samples with heatmap targets and ViTPose's loss; and the evaluation shared by `train` and
// `eval`: the model's heatmaps decoded at their arg-max, scored by PCK@0.1 (of the torso) and
// COCO's OKS-AP, beside two baselines a pose model must beat by far (data/pose/keypoint_baselines.h).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/training.h"
#include "apps/pose/pose_run_config.h"
#include "data/pose/coco_keypoints.h"
#include "data/pose/keypoint_metrics.h"
#include "data/pose/pose_batches.h"
#include "data/pose/stick_figures.h"
#include "nn/loss.h"
#include "nn/pose/vit_pose.h"

namespace uwaga::apps {

// Samples per forward/backward pass of one replica (optim::DataParallel's micro_batch).
constexpr std::int64_t kPoseMicroBatch = 32;

// The skeleton of the run's data: the stick figures' 15 joints or COCO's 17.
const SkeletonSpec& pose_skeleton(const PoseRunConfig& run);

// The heatmaps the run's model writes: 4H/P × 4W/P cells at stride P/4, Gaussians of σ = sigma.
HeatmapTargetOptions heatmap_targets(const PoseRunConfig& run);

// The samples of a run. Synthetic: the training figures (seeded from the run's seed; as many as
// epochs × train_size, so every epoch shows new ones) and a fixed validation set of valid_size
// figures (the same for every run, whatever its seed); COCO: the persons of the annotation file,
// the last valid_size held out for validation, the first train_size (0: all the others) for
// training — every photo is checked to exist when the file is read.
class PoseData {
 public:
  explicit PoseData(const PoseRunConfig& run);

  const SkeletonSpec& skeleton() const { return *valid.skeleton; }
  std::string describe() const;  // one line for the run's summary

  PoseSampleSource train;
  PoseSampleSource valid;
  std::int64_t epoch_size = 0;  // training samples per epoch

 private:
  void load_coco(const PoseRunConfig& run);
  std::string description_;
  std::unique_ptr<StickFigures> train_figures_, valid_figures_;
  std::unique_ptr<CocoKeypoints> coco_;
};

// How well one predictor finds the joints.
struct KeypointScores {
  double pck = 0;                // PCK@0.1 of the torso (synthetic) or box (COCO), in [0, 1]
  std::vector<double> pck_joint;  // (K) per joint; −1 for a joint visible in no sample
  OksApResult oks;               // OKS-AP (ap, ap50, ap75, ...)
};

struct PoseEval {
  std::int64_t n = 0;     // samples
  double loss = 0;        // the heatmap loss (KeypointMSELoss) against the targets
  KeypointScores model;
  // With baselines only: every image the training set's mean pose; every joint at the
  // brightest pixel.
  KeypointScores mean_pose, brightest_pixel;
};

// The model's loss, PCK and OKS-AP on `data` (eval mode, no graph), and the baselines' scores
// when `train` (whose first 1000 samples give the mean pose) is given.
PoseEval evaluate_pose(nn::VitPose& model, const PoseSampleSource& data,
                       const HeatmapTargetOptions& targets,
                       const PoseSampleSource* train = nullptr);

// What a uwaga-pose run trains, and how: the model from the run's seed; PoseBatches of the
// training samples (mirrored at random when flip is on); KeypointMSELoss; AdamW with weight decay
// on the weights only (not biases, norms, embeddings); warm-up + cosine; the validation loss, PCK
// and OKS-AP after every epoch.
class PoseTraining
    : public Training<PoseRunConfig, nn::VitPose, PoseBatches, nn::KeypointMSELoss> {
 public:
  // `data` must outlive this object. `options`: the run's files, budget, threads and log; the
  // configuration, seed, clipping and epochs come from `run`.
  PoseTraining(const PoseRunConfig& run, const PoseData& data, optim::TrainerOptions options);

 private:
  std::map<std::string, double> evaluate() override;
  const PoseData& data_;
};

}  // namespace uwaga::apps
