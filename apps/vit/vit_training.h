#pragma once
// One uwaga-vit training run, set up the one way `uwaga-vit train` and the Python bindings both
// use: a VisionTransformer on an image dataset with softmax cross-entropy; and the evaluation
// shared by `train` and `eval`.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apps/vit/vit_run_config.h"
#include "data/data_loader.h"
#include "nn/loss.h"
#include "nn/vision_transformer.h"
#include "optim/adam.h"
#include "optim/ema.h"
#include "optim/lr_schedule.h"
#include "optim/trainer.h"

namespace uwaga::apps {

struct ClassifierEval {
  std::int64_t n = 0;
  std::int64_t correct = 0;
  double loss = 0;                                // mean cross-entropy
  std::vector<std::vector<std::int64_t>> confusion;  // [true class][predicted class]
  double accuracy() const { return n ? static_cast<double>(correct) / n : 0.0; }
};

// Accuracy, loss and confusion matrix of `model` on `data` (eval mode, no graph).
ClassifierEval evaluate_classifier(nn::VisionTransformer& model, const ImageDataset& data,
                                   const VitRunConfig& run, std::int64_t batch_size = 500);

// What a uwaga-vit run trains, and how: the model from the run's seed; the training images
// shuffled and augmented by a DataLoader; cross-entropy with the run's label smoothing; AdamW with
// weight decay on the weights only (not biases, norms, embeddings); warm-up + cosine; the test
// accuracy and loss after every epoch. `run` holds the training set's normalisation already.
// The recipe (vit_recipe.h): the loader's pixel ops and Mixup / CutMix (soft targets, which the
// cross-entropy takes as probabilities), the model's drop path, and with run.ema > 0 the moving
// average of the weights, which is what the epochs' test accuracy measures then (the weights
// themselves: raw_accuracy).
class VitTraining {
 public:
  // `train` and `test` must outlive this object. `options`: the run's files, budget, threads and
  // log; the configuration, seed, clipping and epochs come from `run`.
  VitTraining(const VitRunConfig& run, const ImageDataset& train, const ImageDataset& test,
              optim::TrainerOptions options);

  optim::TrainSummary fit();

  nn::VisionTransformer& model() { return *model_; }
  std::shared_ptr<nn::VisionTransformer> shared_model() const { return model_; }
  const VitRunConfig& run() const { return run_; }
  std::int64_t batches_per_epoch() const { return loader_.batches_per_epoch(); }
  std::int64_t warmup() const { return schedule_.warmup(); }  // cut to a short run's length

 private:
  VitRunConfig run_;
  const ImageDataset& test_;
  std::shared_ptr<nn::VisionTransformer> model_;
  DataLoader loader_;
  nn::CrossEntropyLoss loss_;
  optim::AdamW optimizer_;
  std::unique_ptr<optim::WithEma> ema_;  // with run.ema > 0: AdamW, then the average
  optim::WarmupCosineLr schedule_;
  optim::Trainer trainer_;
};

}  // namespace uwaga::apps
