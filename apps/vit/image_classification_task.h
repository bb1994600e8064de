#pragma once
// What the trainer trains in uwaga-vit: a VisionTransformer on an image dataset with
// softmax cross-entropy; and the evaluation shared by `train` and `eval`.
#include <map>
#include <string>
#include <vector>

#include "apps/vit/vit_run_config.h"
#include "data/data_loader.h"
#include "optim/data_parallel.h"
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

class ImageClassificationTask : public optim::TrainTask {
 public:
  // A training step runs on `parallel.threads` replicas of the model, one per thread, in
  // micro-batches of at most `parallel.micro_batch` images (optim::DataParallel).
  ImageClassificationTask(nn::VisionTransformer& model, const ImageDataset& train,
                          const ImageDataset& test, const VitRunConfig& run,
                          optim::DataParallelOptions parallel = {});

  nn::Module& model() override { return model_; }
  std::int64_t batches_per_epoch() const override { return loader_.batches_per_epoch(); }
  void begin_epoch(std::int64_t epoch) override { epoch_ = epoch; }
  optim::StepResult train_batch(std::int64_t index) override;  // on one thread, unsplit
  optim::StepResult train_step(std::int64_t index) override;   // split across the replicas
  std::map<std::string, double> evaluate() override;
  std::string config_json() const override { return run_.to_json(); }

 private:
  // Forward and mean cross-entropy of `images` on `model` (the task's model or a replica).
  optim::StepResult loss_on(nn::VisionTransformer& model, const Tensor& images,
                            const Tensor& labels) const;

  nn::VisionTransformer& model_;
  const ImageDataset& test_;
  VitRunConfig run_;
  DataLoader loader_;
  optim::DataParallel<nn::VisionTransformer> parallel_;
  std::int64_t epoch_ = 0;
};

}  // namespace uwaga::apps
