#include "apps/pose/pose_training.h"

#include <algorithm>

#include "core/graph.h"
#include "data/images/augment.h"
#include "data/pose/keypoint_baselines.h"
#include "nn/pose/keypoint_heatmaps.h"
#include "nn/inference_scope.h"

namespace uwaga::apps {
namespace {

// The synthetic validation figures' seed: one fixed set, so runs of any seed are compared on the
// same figures.
constexpr std::uint64_t kValidationSeed = 1000003;
// Samples per forward pass in evaluation.
constexpr std::int64_t kEvalBatch = 64;
// The mean pose baseline averages this many training samples (or all, when fewer).
constexpr std::int64_t kMeanPoseSamples = 1000;

// Samples [first, first + count) of `coco`.
PoseSampleSource coco_range(const CocoKeypoints& coco, std::int64_t first, std::int64_t count) {
  return {count, &coco.skeleton(),
          [&coco, first](std::int64_t i) { return coco.sample(first + i); }};
}

StickFigureConfig stick_figure_config(const PoseRunConfig& run) {
  StickFigureConfig c;
  c.height = run.model.image_height;
  c.width = run.model.image_width;
  return c;
}

}  // namespace

const SkeletonSpec& pose_skeleton(const PoseRunConfig& run) {
  return run.data == "coco" ? coco_skeleton() : stick_figure_skeleton();
}

HeatmapTargetOptions heatmap_targets(const PoseRunConfig& run) {
  return {.height = run.model.heatmap_height(), .width = run.model.heatmap_width(),
          .stride = run.model.heatmap_stride(), .sigma = static_cast<float>(run.sigma)};
}

PoseData::PoseData(const PoseRunConfig& run) {
  if (run.data == "coco") {
    load_coco(run);
    return;
  }
  // Epoch e shows figures e·n … e·n + n − 1: as many as the whole run needs.
  const StickFigureConfig config = stick_figure_config(run);
  train_figures_ = std::make_unique<StickFigures>(config, run.epochs * run.train_size,
                                                  derive_seed(run.seed, 1, 0));
  valid_figures_ = std::make_unique<StickFigures>(config, run.valid_size, kValidationSeed);
  train = pose_sample_source(*train_figures_);
  valid = pose_sample_source(*valid_figures_);
  epoch_size = run.train_size;
  description_ = "stick figures " + std::to_string(config.height) + "x" +
                 std::to_string(config.width) + ": " + std::to_string(run.train_size) +
                 " new each epoch, " + std::to_string(run.valid_size) + " for validation";
}

void PoseData::load_coco(const PoseRunConfig& run) {
  coco_ = std::make_unique<CocoKeypoints>(
      run.coco_annotations, run.coco_images,
      CocoCropConfig{.height = run.model.image_height, .width = run.model.image_width});
  const std::int64_t persons = coco_->size();
  if (run.valid_size >= persons)
    fail("--valid-size ", run.valid_size, " holds out every one of the ", persons, " persons in ",
         run.coco_annotations, ", leaving none to train on");
  const std::int64_t available = persons - run.valid_size;
  epoch_size = run.train_size > 0 ? std::min(run.train_size, available) : available;
  if (epoch_size < step_batch(run))
    fail(run.coco_annotations, " has ", epoch_size, " persons to train on, fewer than one batch "
         "of ", step_batch_text(run), "; lower --batch-size or --valid-size");
  train = coco_range(*coco_, 0, epoch_size);
  valid = coco_range(*coco_, available, run.valid_size);
  description_ = run.coco_annotations + ": " + std::to_string(epoch_size) + " persons for " +
                 "training, the last " + std::to_string(run.valid_size) + " for validation";
}

std::string PoseData::describe() const { return description_; }

namespace {

// What the metrics compare predictions with, for N samples.
struct PoseTruth {
  std::vector<double> keypoints;  // (N, K, 3): x, y, visible
  std::vector<double> visible;    // (N, K)
  std::vector<double> torso;      // (N) PCK's reference length
  std::vector<double> area;       // (N) OKS's s²
};

KeypointScores score_keypoints(const std::vector<double>& predicted, const PoseTruth& truth,
                               const SkeletonSpec& skeleton, std::int64_t height,
                               std::int64_t width) {
  const std::int64_t N = static_cast<std::int64_t>(truth.torso.size());
  const std::int64_t K = skeleton.num_joints();
  KeypointScores s;
  const Tensor p = Tensor::from_vector(predicted, {N, K, 3});
  const Tensor t = Tensor::from_vector(truth.keypoints, {N, K, 3});
  const Tensor v = Tensor::from_vector(truth.visible, {N, K});
  s.pck = pck(p, t, v, truth.torso, 0.1);
  s.pck_joint = pck_per_joint(p, t, v, truth.torso, 0.1);
  std::vector<ImageKeypoints> images(static_cast<std::size_t>(N));
  for (std::int64_t n = 0; n < N; ++n) {
    PersonTruth t;
    PersonDetection d;
    std::vector<float> scores;
    for (std::int64_t k = 0; k < K; ++k) {
      const std::size_t at = static_cast<std::size_t>((n * K + k) * 3);
      t.x.push_back(static_cast<float>(truth.keypoints[at]));
      t.y.push_back(static_cast<float>(truth.keypoints[at + 1]));
      t.visible.push_back(truth.keypoints[at + 2] > 0 ? 2 : 0);
      d.x.push_back(static_cast<float>(predicted[at]));
      d.y.push_back(static_cast<float>(predicted[at + 1]));
      scores.push_back(static_cast<float>(predicted[at + 2]));
    }
    t.area = truth.area[static_cast<std::size_t>(n)];
    t.box = {0, 0, static_cast<double>(width), static_cast<double>(height)};  // the whole crop
    d.score = top_down_score(scores);
    images[static_cast<std::size_t>(n)] = {{t}, {d}};
  }
  std::vector<double> sigmas(skeleton.oks_sigmas.begin(), skeleton.oks_sigmas.end());
  s.oks = oks_ap(images, sigmas);
  return s;
}

// The mean of the first kMeanPoseSamples training samples' visible joints: (K, 2).
Tensor training_mean_pose(const PoseSampleSource& train) {
  const std::int64_t n = std::min(train.size, kMeanPoseSamples);
  const std::int64_t K = train.skeleton->num_joints();
  std::vector<double> keypoints, visible;
  for (std::int64_t i = 0; i < n; ++i) {
    const PoseSample s = train.sample(i);
    for (std::int64_t k = 0; k < K; ++k) {
      keypoints.insert(keypoints.end(), {s.x[k], s.y[k]});
      visible.push_back(s.visible[k]);
    }
  }
  return mean_pose(Tensor::from_vector(keypoints, {n, K, 2}), Tensor::from_vector(visible, {n, K}));
}

void append(std::vector<double>& out, const Tensor& t) {
  const std::vector<double> v = t.to_vector();
  out.insert(out.end(), v.begin(), v.end());
}

}  // namespace

PoseEval evaluate_pose(nn::VitPose& model, const PoseSampleSource& data,
                       const HeatmapTargetOptions& targets, const PoseSampleSource* train) {
  const nn::InferenceScope inference(model);  // eval mode, no graph, until the return
  const nn::KeypointMSELoss loss;
  const std::int64_t N = data.size;
  std::vector<double> predicted, brightest;  // (N, K, 3)
  PoseTruth truth;
  double loss_sum = 0;
  std::int64_t loss_count = 0;
  for (std::int64_t first = 0; first < N; first += kEvalBatch) {
    std::vector<PoseSample> samples;
    for (std::int64_t i = first; i < std::min(N, first + kEvalBatch); ++i) {
      samples.push_back(data.sample(i));
      const PoseSample& s = samples.back();
      for (std::int64_t k = 0; k < s.num_joints(); ++k) {
        truth.keypoints.insert(truth.keypoints.end(), {s.x[k], s.y[k], double(s.visible[k])});
        truth.visible.push_back(s.visible[k]);
      }
      truth.torso.push_back(s.torso);
      truth.area.push_back(s.area);
    }
    const Batch b = make_pose_batch(samples, targets);
    const Tensor heatmaps = model.forward(b.inputs[0]);  // (B, K, h, w)
    const std::int64_t n = loss.count(b.targets);
    loss_sum += loss(heatmaps, b.targets).item() * static_cast<double>(n);
    loss_count += n;
    append(predicted, nn::decode_heatmaps_batch(heatmaps, targets.stride));
    if (train) append(brightest, predict_brightest_pixel(b.inputs[0], model.config.joints));
  }
  PoseEval e;
  e.n = N;
  e.loss = loss_count ? loss_sum / static_cast<double>(loss_count) : 0.0;
  const std::int64_t H = model.config.image_height, W = model.config.image_width;
  e.model = score_keypoints(predicted, truth, *data.skeleton, H, W);
  if (train) {
    const Tensor mean = predict_mean_pose(training_mean_pose(*train), N);
    e.mean_pose = score_keypoints(mean.to_vector(), truth, *data.skeleton, H, W);
    e.brightest_pixel = score_keypoints(brightest, truth, *data.skeleton, H, W);
  }
  return e;
}

PoseTraining::PoseTraining(const PoseRunConfig& run, const PoseData& data,
                           optim::TrainerOptions options)
    : Training(run,
               [&] {
                 return PoseBatches(data.train, data.epoch_size, step_batch(run),
                                    heatmap_targets(run), run.flip, run.seed);
               },
               nn::KeypointMSELoss(), {run.lr}, "valid", std::move(options)),
      data_(data) {}

std::map<std::string, double> PoseTraining::evaluate() {
  const PoseEval e = evaluate_pose(*model_, data_.valid, heatmap_targets(run_));
  return {{"loss", e.loss}, {"pck", e.model.pck}, {"ap", e.model.oks.ap}};
}

}  // namespace uwaga::apps
