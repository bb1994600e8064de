// Part 5 of uwaga-walkthrough: training, written out. A small ViT learns which quadrant of an
// 8 × 8 image is bright; each step is the five lines of `train` below — forward, loss, backward,
// update, zero the gradients — with no Trainer, no replicas and no micro-batches. The Trainer
// (optim/trainer.cpp) runs these same five lines and adds what a long run needs: the batch split
// over threads and processes (optim/data_parallel), the gradients summed back (gradient
// reduction), the learning-rate schedule and clipping, checkpoints, logs and resume.
#include <cstdio>
#include <vector>

#include "apps/walkthrough/attention_steps.h"
#include "apps/walkthrough/walkthrough_print.h"
#include "core/elementwise.h"
#include "core/error.h"
#include "core/graph.h"
#include "core/reduction.h"
#include "nn/cross_entropy.h"
#include "nn/vision_transformer.h"
#include "optim/adam.h"

namespace uwaga::walkthrough {

namespace {

struct Batch {
  Tensor images;  // (B, 1, 8, 8)
  Tensor labels;  // (B,) int64: the bright quadrant, 0 top left … 3 bottom right
};

// Noise, plus 1.5 on one quadrant of each image: a rule a ViT of 4 × 4 patches can learn.
Batch bright_quadrants(std::int64_t B, Generator& gen) {
  Batch b{Tensor::randn({B, 1, 8, 8}, gen), {}};
  std::vector<std::int64_t> labels;
  for (std::int64_t i = 0; i < B; ++i) {
    const std::int64_t q = i % 4, top = (q / 2) * 4, left = (q % 2) * 4;
    for (std::int64_t y = top; y < top + 4; ++y)
      for (std::int64_t x = left; x < left + 4; ++x)
        b.images.set({i, 0, y, x}, b.images.at({i, 0, y, x}) + 1.5);
    labels.push_back(q);
  }
  b.labels = Tensor::from_indices(labels, {B});
  return b;
}

double accuracy(const Tensor& logits, const Tensor& labels) {
  const std::vector<std::int64_t> predicted = argmax(logits, 1).to_indices(),
                                  truth = labels.to_indices();
  std::int64_t right = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) right += predicted[i] == truth[i];
  return static_cast<double>(right) / static_cast<double>(truth.size());
}

// One training step, the whole of it.
double train_step(nn::VisionTransformer& model, optim::Optimizer& optimizer, const Batch& batch) {
  Tensor logits = model.forward(batch.images);          // forward: (B, 4) class scores
  Tensor loss = nn::cross_entropy(logits, batch.labels);  // L: mean of −log p(true class)
  loss.backward();                                      // ∇L into every parameter's .grad()
  optimizer.step();                                     // AdamW: each parameter against its gradient
  optimizer.zero_grad();                                // drop the gradients before the next step
  return loss.item();
}

}  // namespace

void plain_training_step(Generator& gen) {
  constexpr int kSteps = 100;
  const nn::VitConfig config{.image_size = 8, .channels = 1, .patch = 4, .dim = 16, .depth = 2,
                             .heads = 2, .mlp_dim = 32, .num_classes = 4};
  nn::VisionTransformer model(config, gen);
  optim::AdamW optimizer(optim::make_param_groups(model, 0.01), {.lr = 3e-3});
  const Batch test = bright_quadrants(256, gen);

  heading("Part 5: training, written out (no Trainer)");
  std::printf(
      "A ViT (8 x 8 images, 4 x 4 patches: 4 tokens and the class token, D = 16, 2 blocks,\n"
      "2 heads) learns which quadrant of an image of noise is brighter. Every step is:\n"
      "  Tensor logits = model.forward(batch.images);            // forward\n"
      "  Tensor loss = nn::cross_entropy(logits, batch.labels);  // loss\n"
      "  loss.backward();                                        // gradients\n"
      "  optimizer.step();                                       // update\n"
      "  optimizer.zero_grad();                                  // clear for the next step\n"
      "(train_step in apps/walkthrough/plain_training_step.cpp), each on 32 new images;\n"
      "256 images it never trains on measure what it learned.\n\n");
  const auto test_accuracy = [&] {
    NoGradGuard no_grad;
    return accuracy(model.forward(test.images), test.labels);
  };
  std::printf("before training: test accuracy %.2f (chance: 0.25)\n", test_accuracy());
  double first = 0, last = 0;  // the mean loss of the first and of the last 10 steps
  for (int step = 1; step <= kSteps; ++step) {
    const double loss = train_step(model, optimizer, bright_quadrants(32, gen));
    if (step <= 10) first += loss / 10;
    if (step > kSteps - 10) last += loss / 10;
    if (step == 1 || step % 10 == 0) std::printf("step %3d  loss %.4f\n", step, loss);
  }
  const double acc = test_accuracy();
  std::printf("after %d steps: test accuracy %.2f\n", kSteps, acc);
  std::printf("\ncheck: the loss went down, mean of the first 10 steps %.4f, of the last 10 %.4f  %s\n", first, last,
              last < first ? "OK" : "NOT OK");
  if (!(last < first)) fail("the written-out training step did not lower the loss");
}

}  // namespace uwaga::walkthrough
