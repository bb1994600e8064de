#pragma once
// 2-D max pooling of NCHW feature maps, as PyTorch's nn.MaxPool2d (dilation 1, floor mode):
//   y[b, c, i, j] = max_{u, v < k} x[b, c, i·s − p + u, j·s − p + v]
// over the k×k window, the positions outside the image left out (PyTorch pads with −∞), and
//   H' = ⌊(H + 2p − k)/s⌋ + 1,   W' = ⌊(W + 2p − k)/s⌋ + 1.
// The gradient flows to the one input each output took its value from:
//   dx[b, c, m, n] = Σ_{(i, j): argmax(i, j) = (m, n)} dy[b, c, i, j]
// (overlapping windows, k > s, can send several outputs' gradients to one input). Among equal
// values the window's first in raster order wins, and a NaN wins over any number, as PyTorch's
// CPU kernel decides.
//
// max_pool2d takes each window's maximum in two passes (down the rows, then across the columns),
// whose loops vectorise; max_pool2d_reference scans each window as the formula reads. The tests
// check that the two pick the same input, NaNs and ties included.
//
// CCT's convolutional tokenizer (nn/vit_backbone.h) follows each 3×3 convolution with a
// max_pool2d(3, stride 2, padding 1), which halves the map.
#include <cstdint>

#include "core/tensor.h"

namespace uwaga::nn {

// x (B, C, H, W) -> (B, C, H', W'); k ≥ 1, s ≥ 1, 0 ≤ p ≤ k/2 (PyTorch's bounds: every window
// then holds at least one pixel of the image).
Tensor max_pool2d(const Tensor& x, std::int64_t kernel, std::int64_t stride, std::int64_t padding);
Tensor max_pool2d_reference(const Tensor& x, std::int64_t kernel, std::int64_t stride,
                            std::int64_t padding);

}  // namespace uwaga::nn
