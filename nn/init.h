#pragma once
// Initialisers. Each fills a tensor in place from an explicit generator, so a model built from a
// seed is the same every time.
#include "core/random.h"
#include "core/tensor.h"

namespace uwaga::nn::init {

// Normal(0, std) truncated to [-2 std, 2 std] by redrawing (timm's ViT init for weights).
void trunc_normal(Tensor& t, Generator& gen, double std = 0.02);
void normal(Tensor& t, Generator& gen, double std);
void uniform(Tensor& t, Generator& gen, double bound);  // U(-bound, bound)
void zeros(Tensor& t);
void ones(Tensor& t);

}  // namespace uwaga::nn::init
