// Training through MultiHeadAttention's reference path (the formula step by step: project, split
// into heads, attend, concatenate, W_O) lands where training through the fused kernel does: the
// same loss at every step, in float64, for each model configuration that chooses the path
// (uwaga-vit/-translate/-gpt/-pose train --attention reference).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/uwaga.h"
#include "nn/gpt.h"
#include "nn/loss.h"
#include "nn/seq2seq_transformer.h"
#include "nn/vision_transformer.h"
#include "nn/pose/vit_pose.h"
#include "optim/adam.h"

using namespace uwaga;
using namespace uwaga::nn;

namespace {

// The losses of 4 AdamW steps of a model of configuration `c` computing its attention by `path`,
// in float64, from the same initial weights (seed 5) whatever the path. `check_path` sees the
// model first (that the path reached its attention layers); `loss_of` computes a batch's loss.
template <class Model, class Config, class CheckPath, class LossOf>
std::vector<double> losses_through(Config c, AttentionPath path, CheckPath check_path,
                                   LossOf loss_of) {
  c.attention = path;
  Generator gen(5);
  Model model(c, gen);
  check_path(model, path);
  model.to(DType::Float64);
  optim::AdamW optimizer(optim::make_param_groups(model, 0.01), {.lr = 0.01});
  std::vector<double> losses;
  for (int step = 0; step < 4; ++step) {
    optimizer.zero_grad();
    Tensor loss = loss_of(model);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item());
  }
  return losses;
}

template <class Model, class Config, class CheckPath, class LossOf>
void require_same_training(const Config& c, CheckPath check_path, LossOf loss_of) {
  const std::vector<double> fast =
      losses_through<Model>(c, AttentionPath::fast, check_path, loss_of);
  const std::vector<double> reference =
      losses_through<Model>(c, AttentionPath::reference, check_path, loss_of);
  for (std::size_t i = 0; i < fast.size(); ++i) {
    INFO("step " << i + 1 << ": fast " << fast[i] << ", reference " << reference[i]);
    REQUIRE(std::isfinite(fast[i]));
    REQUIRE(std::fabs(fast[i] - reference[i]) <= 1e-10 * std::max(1.0, std::fabs(fast[i])));
  }
  REQUIRE(fast.back() < fast.front());  // the steps trained: the losses compared moved
}

Tensor normal64(const Shape& shape, std::uint64_t seed) {
  Generator gen(seed);
  return Tensor::randn(shape, gen, DType::Float64);
}

}  // namespace

TEST_CASE("attention paths: a ViT trains the same through the reference path as the fast one") {
  VitConfig c;
  c.image_size = 8, c.channels = 1, c.patch = 4, c.dim = 8, c.depth = 2, c.heads = 2;
  c.mlp_dim = 12, c.num_classes = 3;
  const Tensor images = normal64({4, 1, 8, 8}, 11);
  const Tensor labels = Tensor::from_indices({0, 2, 1, 2}, {4});
  const CrossEntropyLoss loss;
  require_same_training<VisionTransformer>(
      c,
      [](VisionTransformer& m, AttentionPath path) {
        for (const auto& block : m.backbone->blocks) REQUIRE(block->attn->options.path == path);
      },
      [&](VisionTransformer& m) { return loss(m.forward(images), labels); });
}

TEST_CASE("attention paths: a GPT (causal mask) trains the same through both paths") {
  GptConfig c;
  c.vocab = 7, c.context = 6, c.dim = 8, c.layers = 2, c.heads = 2, c.mlp_dim = 12;
  const Tensor ids = Tensor::from_indices({1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1}, {2, 6});
  const Tensor next = Tensor::from_indices({2, 3, 4, 5, 6, 0, 5, 4, 3, 2, 1, 0}, {2, 6});
  const CrossEntropyLoss loss;
  require_same_training<Gpt>(
      c,
      [](Gpt& m, AttentionPath path) {
        for (const auto& block : m.blocks) REQUIRE(block->attn->options.path == path);
      },
      [&](Gpt& m) { return loss(m.forward(ids), next); });
}

TEST_CASE("attention paths: an encoder-decoder (padding, causal, cross-attention) trains the same "
          "through both paths") {
  Seq2SeqConfig c;
  c.src_vocab = 7, c.tgt_vocab = 9, c.dim = 8, c.heads = 2, c.encoder_layers = 1;
  c.decoder_layers = 2, c.mlp_dim = 12, c.max_length = 8;
  // Padding (id 0) on both sides: source rows of 4 and 2 words, targets of 3 and 2.
  const Tensor src = Tensor::from_indices({4, 5, 6, 2, 3, 2, 0, 0}, {2, 4});
  const Tensor tgt_in = Tensor::from_indices({1, 4, 5, 1, 7, 0}, {2, 3});
  const Tensor tgt_out = Tensor::from_indices({4, 5, 2, 7, 2, -100}, {2, 3});
  const CrossEntropyLoss loss;
  require_same_training<Seq2SeqTransformer>(
      c,
      [](Seq2SeqTransformer& m, AttentionPath path) {
        for (const auto& block : m.encoder) REQUIRE(block->attn->options.path == path);
        for (const auto& block : m.decoder) {
          REQUIRE(block->self_attn->options.path == path);
          REQUIRE(block->cross_attn->options.path == path);
        }
      },
      [&](Seq2SeqTransformer& m) { return loss(m.forward(src, tgt_in), tgt_out); });
}

TEST_CASE("attention paths: ViTPose's backbone takes the path of its configuration") {
  PoseConfig c;
  c.attention = AttentionPath::reference;
  Generator gen(1);
  const VitPose model(c, gen);
  for (const auto& block : model.backbone->blocks)
    REQUIRE(block->attn->options.path == AttentionPath::reference);
  REQUIRE(model.replica() != nullptr);
  const auto replica = std::dynamic_pointer_cast<VitPose>(model.replica());
  for (const auto& block : replica->backbone->blocks)
    REQUIRE(block->attn->options.path == AttentionPath::reference);
}
