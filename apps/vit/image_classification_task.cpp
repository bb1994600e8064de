#include "apps/vit/image_classification_task.h"

#include "core/graph.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "nn/cross_entropy.h"

namespace uwaga::apps {
namespace {

DataLoaderOptions loader_options(const VitRunConfig& run, bool train, std::int64_t batch_size) {
  DataLoaderOptions o;
  o.batch_size = batch_size;
  o.shuffle = train;
  o.drop_last = train;
  o.seed = run.seed;
  o.mean = run.mean;
  o.std = run.std;
  if (train && run.augment) {
    if (run.dataset == "cifar10") o.augment = AugmentOptions::cifar10();
    else if (run.dataset == "fashion-mnist") o.augment = AugmentOptions::fashion_mnist();
    else o.augment = AugmentOptions::mnist();
  }
  return o;
}

// The training loader's options, once the training set is known to fill one batch: training
// drops the last partial batch, so fewer images than --batch-size leave nothing to train on. (The
// DataLoader would refuse too, but in its own words, naming neither flag.)
DataLoaderOptions train_loader_options(const VitRunConfig& run, const ImageDataset& train) {
  if (train.count < run.batch_size)
    fail("train: the training set has ", train.count, " images, fewer than one batch of ",
         run.batch_size, "; lower --batch-size or raise --train-size");
  return loader_options(run, true, run.batch_size);
}

std::int64_t count_correct(const Tensor& logits, const Tensor& labels) {
  std::vector<std::int64_t> predicted = argmax(logits, 1).to_indices();
  std::vector<std::int64_t> truth = labels.to_indices();
  std::int64_t correct = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) correct += predicted[i] == truth[i];
  return correct;
}

}  // namespace

ClassifierEval evaluate_classifier(nn::VisionTransformer& model, const ImageDataset& data,
                                   const VitRunConfig& run, std::int64_t batch_size) {
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  DataLoader loader(data, loader_options(run, false, batch_size));
  const std::int64_t classes = run.model.num_classes;
  ClassifierEval result;
  result.confusion.assign(classes, std::vector<std::int64_t>(classes, 0));
  double loss_sum = 0;
  for (std::int64_t b = 0; b < loader.batches_per_epoch(); ++b) {
    Batch batch = loader.batch(0, b);
    Tensor logits = model.forward(batch.images);
    const std::int64_t n = batch.labels.numel();
    loss_sum += nn::cross_entropy(logits, batch.labels).item() * n;
    std::vector<std::int64_t> predicted = argmax(logits, 1).to_indices();
    std::vector<std::int64_t> truth = batch.labels.to_indices();
    for (std::int64_t i = 0; i < n; ++i) {
      result.confusion[truth[i]][predicted[i]]++;
      result.correct += predicted[i] == truth[i];
    }
    result.n += n;
  }
  result.loss = result.n ? loss_sum / result.n : 0;
  model.train(was_training);
  return result;
}

ImageClassificationTask::ImageClassificationTask(nn::VisionTransformer& model,
                                                 const ImageDataset& train,
                                                 const ImageDataset& test, const VitRunConfig& run,
                                                 optim::DataParallelOptions parallel)
    : model_(model),
      test_(test),
      run_(run),
      loader_(train, train_loader_options(run, train)),
      parallel_(
          model,
          [&run] {
            Generator unused(0);  // a replica's initial values are replaced by the model's
            return std::make_shared<nn::VisionTransformer>(run.model, unused);
          },
          parallel) {}

optim::StepResult ImageClassificationTask::loss_on(nn::VisionTransformer& model, const Tensor& images,
                                                   const Tensor& labels) const {
  Tensor logits = model.forward(images);  // (B, classes)
  optim::StepResult r;
  r.loss = nn::cross_entropy(logits, labels, {-100, run_.label_smoothing});
  r.items = labels.numel();
  NoGradGuard no_grad;
  r.correct = count_correct(logits, labels);
  return r;
}

optim::StepResult ImageClassificationTask::train_batch(std::int64_t index) {
  Batch batch = loader_.batch(epoch_, index);
  return loss_on(model_, batch.images, batch.labels);
}

optim::StepResult ImageClassificationTask::train_step(std::int64_t index) {
  Batch batch = loader_.batch(epoch_, index);
  return parallel_.step(batch.labels.numel(), [&](nn::VisionTransformer& model, optim::RowRange rows) {
    return loss_on(model, slice(batch.images, 0, rows.begin, rows.end),
                   slice(batch.labels, 0, rows.begin, rows.end));
  });
}

std::map<std::string, double> ImageClassificationTask::evaluate() {
  ClassifierEval e = evaluate_classifier(model_, test_, run_);
  return {{"accuracy", e.accuracy()}, {"loss", e.loss}};
}

}  // namespace uwaga::apps
