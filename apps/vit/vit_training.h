#pragma once
// One uwaga-vit training run, set up the one way `uwaga-vit train` and the Python bindings both
// use: a VisionTransformer on an image dataset with softmax cross-entropy; and the evaluation
// shared by `train` and `eval`.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/training.h"
#include "apps/vit/vit_run_config.h"
#include "data/data_loader.h"
#include "nn/loss.h"
#include "nn/vision_transformer.h"

namespace uwaga::apps {

// Images per forward/backward pass, in training (the default of --micro-batch) and in evaluation.
// The fastest of 8, 12, 16, 24, 32 and 64 on mnist-tiny (uwaga-bench --mode train --micro-batch N,
// side by side): 16 computes gradients about 10 % faster than 32 on one thread and on two
// (uwaga-vit's training, which also loads and shifts the images, 5 %); with 8 or 12 the matrix
// products get too few rows. Evaluation on cifar10-vit, 8, 16, 32 and 64 at a time: 3140, 3168,
// 3085, 2649 images/s (uwaga-bench --mode eval, 2 threads).
inline constexpr std::int64_t kVitMicroBatch = 16;

// The DataLoader options of a run: its seed and normalisation (run.mean, run.std: measured on the
// training set first); in training (`train`) shuffled, the last partial batch dropped, and the
// run's augmentation and Mixup / CutMix. The batches `uwaga-vit train` trains on are those of
// DataLoader(train_images, vit_loader_options(run, true, run.batch_size)), batch(epoch, b).
DataLoaderOptions vit_loader_options(const VitRunConfig& run, bool train, std::int64_t batch_size);

struct ClassifierEval {
  std::int64_t n = 0;
  std::int64_t correct = 0;
  double loss = 0;                                // mean cross-entropy
  std::vector<std::vector<std::int64_t>> confusion;  // [true class][predicted class]
  double accuracy() const { return n ? static_cast<double>(correct) / n : 0.0; }
};

// Accuracy, loss and confusion matrix of `model` on `data` (eval mode, no graph). With `flip`,
// test-time augmentation: each image's logits are the mean of the model's on the image and on
// its mirror image (left and right swapped, as the training's random flips show it them), for
// twice the forward passes.
ClassifierEval evaluate_classifier(nn::VisionTransformer& model, const ImageDataset& data,
                                   const VitRunConfig& run, std::int64_t batch_size = 500,
                                   bool flip = false);

// Images (B, C, H, W) mirrored left to right: column w becomes column W − 1 − w.
Tensor mirror_images(const Tensor& images);

// What a uwaga-vit run trains, and how: the model from the run's seed; the training images
// shuffled and augmented by a DataLoader; cross-entropy with the run's label smoothing; AdamW with
// weight decay on the weights only (not biases, norms, embeddings); warm-up + cosine; the test
// accuracy and loss after every epoch. `run` holds the training set's normalisation already.
// The recipe (vit_recipe.h): the loader's pixel ops and Mixup / CutMix (soft targets, which the
// cross-entropy takes as probabilities), the model's drop path, and with run.ema > 0 the moving
// average of the weights, which is what the epochs' test accuracy measures then (the weights
// themselves: raw_accuracy).
class VitTraining
    : public Training<VitRunConfig, nn::VisionTransformer, DataLoader, nn::CrossEntropyLoss> {
 public:
  // `train` and `test` must outlive this object. `options`: the run's files, budget, threads and
  // log; the configuration, seed, clipping and epochs come from `run`.
  VitTraining(const VitRunConfig& run, const ImageDataset& train, const ImageDataset& test,
              optim::TrainerOptions options);

 private:
  std::map<std::string, double> evaluate() override;
  const ImageDataset& test_;
};

}  // namespace uwaga::apps
