// BatchNorm's running statistics under DataParallel and in checkpoints: training on two threads
// repeats bit for bit; the running statistics are those of thread 0's micro-batches alone (the
// replicas read the model's buffers but never write them); and a checkpoint saves and restores
// them with the parameters.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "core/elementwise.h"
#include "core/random.h"
#include "core/safetensors.h"
#include "nn/conv/batch_norm2d.h"
#include "nn/conv/conv2d.h"
#include "nn/conv/conv_transpose2d.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "optim/checkpoint.h"
#include "optim/data_parallel.h"
#include "optim/sgd.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using namespace uwaga::optim;

namespace {

// A heatmap head in miniature: conv → BatchNorm → ReLU → transposed conv (×2).
class TinyHeatmapNet : public nn::Model {
 public:
  explicit TinyHeatmapNet(std::uint64_t seed) {
    Generator gen(seed);
    conv = register_module(
        "conv", std::make_shared<nn::Conv2d>(1, 4, 3, nn::Conv2dOptions{.padding = 1}, gen));
    bn = register_module("bn", std::make_shared<nn::BatchNorm2d>(4));
    up = register_module("up", std::make_shared<nn::ConvTranspose2d>(
                                   4, 2, 4, nn::ConvTranspose2dOptions{.stride = 2, .padding = 1},
                                   gen));
  }
  Tensor forward_batch(const std::vector<Tensor>& inputs) override {
    expect_inputs(inputs, 1, "TinyHeatmapNet", "images");
    return up->forward(relu(bn->forward(conv->forward(inputs[0]))));
  }
  std::shared_ptr<nn::Model> replica() const override {
    return in_my_dtype(std::make_shared<TinyHeatmapNet>(0));
  }

  std::shared_ptr<nn::Conv2d> conv;
  std::shared_ptr<nn::BatchNorm2d> bn;
  std::shared_ptr<nn::ConvTranspose2d> up;
};

Batch make_batch(std::int64_t rows) {
  Generator gen(5);
  return {{Tensor::randn({rows, 1, 6, 6}, gen, DType::Float32, 0.5, 2.0)},
          Tensor::randn({rows, 2, 12, 12}, gen)};
}

// Every parameter and buffer, by name, as doubles.
std::map<std::string, std::vector<double>> state_values(const nn::Module& m) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [name, t] : m.state_dict()) out[name] = t.to_vector();
  return out;
}

// `steps` SGD steps on two threads, one micro-batch per thread.
void train(TinyHeatmapNet& model, int steps) {
  DataParallel parallel(model, {.threads = 2});
  Sgd sgd(make_param_groups(model, 0.0), {.lr = 0.05, .momentum = 0.9});
  const Batch batch = make_batch(8);
  for (int s = 0; s < steps; ++s) {
    sgd.zero_grad();
    parallel.gradient(batch, nn::MeanSquaredError());
    sgd.step();
  }
}

}  // namespace

TEST_CASE("training with BatchNorm on two threads repeats bit for bit",
          "[data_parallel][batch_norm2d]") {
  TinyHeatmapNet a(1), b(1);
  const auto initial = state_values(a);
  train(a, 4);
  train(b, 4);
  const auto trained = state_values(a);
  REQUIRE(trained == state_values(b));
  // The running statistics moved, once per step (thread 0 runs one micro-batch a step).
  CHECK(trained.at("bn.running_mean") != initial.at("bn.running_mean"));
  CHECK(trained.at("bn.running_var") != initial.at("bn.running_var"));
  CHECK(a.bn->num_batches_tracked.item() == 4);
  // The optimizer sees parameters only: the momentum buffers name no buffer.
  Sgd sgd(make_param_groups(a, 0.0), {.lr = 0.05, .momentum = 0.9});
  for (const ParamGroup& group : sgd.groups())
    for (const std::string& name : group.names) CHECK(name.find("running") == std::string::npos);
}

TEST_CASE("under DataParallel the running statistics are thread 0's micro-batch's",
          "[data_parallel][batch_norm2d]") {
  TinyHeatmapNet model(2);
  DataParallel parallel(model, {.threads = 2});
  const Batch batch = make_batch(8);
  parallel.gradient(batch, nn::MeanSquaredError());
  // One model on rows 0–3 alone (thread 0's share) moves its statistics the same way; had the
  // replica on rows 4–7 written them too, the count would be 2 and the means different.
  TinyHeatmapNet alone(2);
  alone.forward_batch(batch.rows(0, 4).inputs);
  REQUIRE(model.bn->num_batches_tracked.item() == 1);
  const std::vector<double> got = model.bn->running_mean.to_vector();
  const std::vector<double> expected = alone.bn->running_mean.to_vector();
  for (std::size_t c = 0; c < got.size(); ++c) CHECK(got[c] == Approx(expected[c]).epsilon(1e-6));
  const std::vector<double> got_var = model.bn->running_var.to_vector();
  const std::vector<double> expected_var = alone.bn->running_var.to_vector();
  for (std::size_t c = 0; c < got_var.size(); ++c)
    CHECK(got_var[c] == Approx(expected_var[c]).epsilon(1e-6));
  // In eval mode the replica normalises with the model's running statistics: the whole batch's
  // gradient on two threads equals one forward/backward on one.
  model.eval();
  alone.eval();
  alone.load_state_dict(model.state_dict());
  model.zero_grad();
  parallel.gradient(batch, nn::MeanSquaredError());
  nn::MeanSquaredError()(alone.forward_batch(batch.inputs), batch.targets).backward();
  const auto mine = model.named_parameters(), theirs = alone.named_parameters();
  for (std::size_t i = 0; i < mine.size(); ++i) {
    INFO(mine[i].first);
    const std::vector<double> g = mine[i].second.grad().to_vector();
    const std::vector<double> e = theirs[i].second.grad().to_vector();
    for (std::size_t k = 0; k < g.size(); ++k)
      CHECK(g[k] == Approx(e[k]).epsilon(1e-4).margin(1e-6));
  }
}

TEST_CASE("a checkpoint saves and restores BatchNorm's running statistics",
          "[optim][checkpoint][batch_norm2d]") {
  testing::TempDir dir("bn-checkpoint");
  TinyHeatmapNet trained(3);
  train(trained, 3);
  Sgd sgd(make_param_groups(trained, 0.0), {.lr = 0.05});
  CheckpointInfo info;
  info.step = 3;
  info.lr = 0.05;
  save_checkpoint(dir.file("ckpt.safetensors"), trained, &sgd, info);

  TinyHeatmapNet restored(4);  // other initial values, fresh statistics
  REQUIRE(state_values(restored) != state_values(trained));
  Sgd restored_sgd(make_param_groups(restored, 0.0), {.lr = 0.05});
  load_checkpoint(dir.file("ckpt.safetensors"), restored, &restored_sgd);
  REQUIRE(state_values(restored) == state_values(trained));
  REQUIRE(restored.bn->num_batches_tracked.item() == 3);
  REQUIRE(restored.bn->num_batches_tracked.dtype() == DType::Int64);
  // Same values, same eval-mode answers.
  trained.eval();
  restored.eval();
  const Batch batch = make_batch(2);
  REQUIRE(trained.forward_batch(batch.inputs).to_vector() ==
          restored.forward_batch(batch.inputs).to_vector());

  // Checked from the header before a model is built, the buffers count as the model's tensors,
  // the batch count in int64.
  ParameterShapes shapes;
  for (const auto& [name, t] : trained.state_dict()) shapes[name] = t.shape();
  check_checkpoint_shapes(dir.file("ckpt.safetensors"), shapes);
  CHECK(checkpoint_dtype("bn.num_batches_tracked") == DType::Int64);
  CHECK(checkpoint_dtype("bn.running_mean") == DType::Float32);
  CHECK(checkpoint_dtype("bn.not_num_batches_tracked") == DType::Float32);
  shapes.erase("bn.running_var");
  REQUIRE_THROWS_WITH(check_checkpoint_shapes(dir.file("ckpt.safetensors"), shapes),
                      Catch::Contains("bn.running_var: not in the model"));

  // A checkpoint without the buffers does not fit a model that has them.
  auto params_only = [&] {
    std::map<std::string, Tensor> tensors;
    for (const auto& [name, p] : trained.named_parameters()) tensors["model." + name] = p;
    return tensors;
  }();
  save_safetensors(dir.file("old.safetensors"), params_only,
                   {{"format", kCheckpointFormat}, {"step", "0"}, {"epoch", "0"},
                    {"batch_in_epoch", "0"}, {"epoch_finished", "0"}, {"lr", "0"}});
  REQUIRE_THROWS_WITH(load_checkpoint(dir.file("old.safetensors"), restored, nullptr),
                      Catch::Contains("Missing (3): bn.running_mean, bn.running_var, "
                                      "bn.num_batches_tracked."));
}
