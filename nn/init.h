#pragma once
// Initialisers. Each fills a tensor in place from an explicit generator, so a model built from a
// seed is the same every time. A tensor declared without storage (declare-only mode, nn/module.h)
// is left as it is: it has no values to fill. While a WeightsToLoad lives the random ones draw
// nothing.
#include "core/random.h"
#include "core/tensor.h"

namespace uwaga::nn::init {

// Normal(0, std) truncated to [-2 std, 2 std] by redrawing (timm's ViT init for weights).
void trunc_normal(Tensor& t, Generator& gen, double std = 0.02);
void normal(Tensor& t, Generator& gen, double std);
void uniform(Tensor& t, Generator& gen, double bound);  // U(-bound, bound)
// He/Kaiming uniform, as PyTorch's kaiming_uniform_(t, a) with a leaky-ReLU slope a:
//   gain = √(2 / (1 + a²)),  bound = gain · √(3 / fan_in),  t ~ U(−bound, bound).
// PyTorch's convolutions and linear layers use a = √5, which makes bound = 1/√fan_in.
void kaiming_uniform(Tensor& t, Generator& gen, std::int64_t fan_in, double a);
// He/Kaiming normal for ReLU layers, as PyTorch's kaiming_normal_(t) (fan_in mode, a = 0):
//   gain = √2,  std = gain / √fan_in = √(2 / fan_in),  t ~ N(0, std²)  (not truncated).
void kaiming_normal(Tensor& t, Generator& gen, std::int64_t fan_in);
void zeros(Tensor& t);
void ones(Tensor& t);

// While one lives on this thread, trunc_normal, normal, uniform and kaiming_uniform write zeros
// instead of drawing: a model built only to receive its weights from a file (a resumed run,
// uwaga-gpt train --init) skips the draws, 124 M normal numbers for GPT-2 small, about 10 s on
// one core. zeros and ones still fill.
class WeightsToLoad {
 public:
  WeightsToLoad();
  ~WeightsToLoad();
  WeightsToLoad(const WeightsToLoad&) = delete;
  WeightsToLoad& operator=(const WeightsToLoad&) = delete;

 private:
  bool outer_;  // the mode before this one, restored on destruction
};

}  // namespace uwaga::nn::init
