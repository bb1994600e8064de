#include "apps/vit/vit_training.h"

#include <algorithm>

#include "core/elementwise.h"
#include "core/graph.h"
#include "core/indexing.h"
#include "nn/cross_entropy.h"
#include "core/reduction.h"
#include "nn/inference_scope.h"
#include "optim/data_parallel.h"

namespace uwaga::apps {

DataLoaderOptions vit_loader_options(const VitRunConfig& run, bool train, std::int64_t batch_size) {
  DataLoaderOptions o;
  o.batch_size = batch_size;
  o.shuffle = train;
  o.drop_last = train;
  o.seed = run.seed;
  o.mean = run.mean;
  o.std = run.std;
  if (train) {
    o.augment = training_augment(run);
    o.mix = training_mix(run);
  }
  return o;
}

namespace {

// The training loader's options, once the training set is known to fill one batch: training
// drops the last partial batch, so fewer images than --batch-size leave nothing to train on. (The
// DataLoader would refuse too, but in its own words, naming neither flag.)
DataLoaderOptions train_loader_options(const VitRunConfig& run, const ImageDataset& train) {
  if (train.count < step_batch(run))
    fail("train: the training set has ", train.count, " images, fewer than one batch of ",
         step_batch_text(run), "; lower --batch-size or raise --train-size");
  return vit_loader_options(run, true, step_batch(run));
}

}  // namespace

Tensor mirror_images(const Tensor& images) {
  const std::int64_t W = images.size(3);
  std::vector<std::int64_t> columns(static_cast<std::size_t>(W));
  for (std::int64_t w = 0; w < W; ++w) columns[w] = W - 1 - w;
  return index_select(images, 3, Tensor::from_indices(columns, {W}));
}

ClassifierEval evaluate_classifier(nn::VisionTransformer& model, const ImageDataset& data,
                                   const VitRunConfig& run, std::int64_t batch_size, bool flip) {
  const nn::InferenceScope inference(model);  // eval mode, no graph, until the return
  // A replica per thread, each taking its share of a batch kVitMicroBatch images at a time, as in
  // training: on 2 threads 1.3× (cifar10-vit) and 1.4× (mnist-tiny) the images per second of one
  // forward pass splitting each op across the threads (uwaga-bench --mode eval).
  optim::DataParallel parallel(model, {0, kVitMicroBatch});
  DataLoader loader(data, vit_loader_options(run, false, batch_size));
  const std::int64_t classes = run.model.num_classes;
  ClassifierEval result;
  result.confusion.assign(classes, std::vector<std::int64_t>(classes, 0));
  double loss_sum = 0;
  for (std::int64_t b = 0; b < loader.batches_per_epoch(); ++b) {
    ImageBatch batch = loader.batch(0, b);
    Tensor logits = parallel.forward({batch.images});
    if (flip) logits = (logits + parallel.forward({mirror_images(batch.images)})) * 0.5;
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
  return result;
}

VitTraining::VitTraining(const VitRunConfig& run, const ImageDataset& train,
                         const ImageDataset& test, optim::TrainerOptions options)
    : Training(run, [&] { return DataLoader(train, train_loader_options(run, train)); },
               nn::CrossEntropyLoss({-100, run.label_smoothing}), {run.lr}, "test",
               std::move(options), run.ema),
      test_(test) {}

std::map<std::string, double> VitTraining::evaluate() {
  const ClassifierEval e = evaluate_classifier(*model_, test_, run_);
  if (!ema_) return {{"accuracy", e.accuracy()}, {"loss", e.loss}};
  optim::AveragedWeights averaged(*model_, ema_->averages());
  const ClassifierEval a = evaluate_classifier(*model_, test_, run_);
  return {{"accuracy", a.accuracy()}, {"loss", a.loss}, {"raw_accuracy", e.accuracy()},
          {"raw_loss", e.loss}};
}

}  // namespace uwaga::apps
