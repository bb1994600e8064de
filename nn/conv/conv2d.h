#pragma once
// 2-D convolution of NCHW feature maps, as PyTorch's nn.Conv2d (groups 1, dilation 1):
//   y[b, o, i, j] = bias[o] + Σ_{c, u, v} W[o, c, u, v] · x[b, c, i·s − p + u, j·s − p + v]
// with x taken as 0 outside the image, stride s and padding p (the same along H and W), and
//   H' = ⌊(H + 2p − kh)/s⌋ + 1,   W' = ⌊(W + 2p − kw)/s⌋ + 1.
// W is (O, C, kh, kw) and bias (O), PyTorch's layouts and names, so state dicts line up.
//
// conv2d is one autograd node computed as matrix products. im2col lays out, for every output
// position (i, j), the C·kh·kw input values the kernel sees there as one column; the kernel,
// flattened, is one row per output channel; so each image's convolution is one GEMM:
//   col[b] (C·kh·kw, H'·W'),   Y[b] (O, H'·W') = W (O, C·kh·kw) · col[b] + bias
// That GEMM costs O·C·kh·kw·H'·W' multiply-adds per image: the O(k·n·d²) of a convolutional layer
// in SEEDS §7's table (k = kh·kw taps, n = H'·W' positions, d = C ≈ O channels).
// conv2d_reference computes the sum above with plain loops; the tests check that the two agree,
// values and gradients.
#include <cstdint>

#include "core/random.h"
#include "nn/module.h"

namespace uwaga::nn {

// x (B, C, H, W), weight (O, C, kh, kw), bias (O) or undefined (none) -> (B, O, H', W').
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::int64_t stride,
              std::int64_t padding);
Tensor conv2d_reference(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        std::int64_t stride, std::int64_t padding);

// ---- kernels (also the transposed convolution's, nn/conv/conv_transpose2d.h) -----------------------

// The sizes of one convolution x (B, C, H, W) * W (O, C, kh, kw) -> y (B, O, H', W').
struct Conv2dGeometry {
  std::int64_t batch = 0, in_channels = 0, height = 0, width = 0;  // B, C, H, W
  std::int64_t out_channels = 0, kernel_h = 0, kernel_w = 0;       // O, kh, kw
  std::int64_t stride = 1, padding = 0;                            // s, p
  std::int64_t out_height = 0, out_width = 0;                      // H', W'

  std::int64_t patch() const { return in_channels * kernel_h * kernel_w; }  // rows of col
  std::int64_t positions() const { return out_height * out_width; }         // columns of col
  // A 1×1 kernel with stride 1 and no padding sees x itself: col[b] is x[b], no copy.
  bool pointwise() const {
    return kernel_h == 1 && kernel_w == 1 && stride == 1 && padding == 0;
  }
};

// One image: col (C·kh·kw, H'·W') from x (C, H, W), zeros where the kernel hangs over the edge.
template <class T>
void im2col(T* col, const T* x, const Conv2dGeometry& g);
// Its adjoint: x (C, H, W) += the values of col (C·kh·kw, H'·W') added back where they came from.
template <class T>
void col2im_add(T* x, const T* col, const Conv2dGeometry& g);

// Whole batches, every array row-major and contiguous; outputs are written, not added into.
//   y (B, O, H', W') = conv(x (B, C, H, W)) + bias (O)        (bias null: none)
template <class T>
void conv2d_forward(T* y, const T* x, const T* weight, const T* bias, const Conv2dGeometry& g);
//   dx (B, C, H, W) = convᵀ(dy (B, O, H', W'))               the input's gradient
template <class T>
void conv2d_backward_input(T* dx, const T* dy, const T* weight, const Conv2dGeometry& g);
//   dW (O, C, kh, kw) = Σ_b dy[b] col[b]ᵀ                      the weight's gradient
template <class T>
void conv2d_backward_weight(T* dweight, const T* dy, const T* x, const Conv2dGeometry& g);

// y (B, C, spatial) += bias (C), broadcast over the batch and the positions.
template <class T>
void add_channel_bias(T* y, const T* bias, std::int64_t batch, std::int64_t channels,
                      std::int64_t spatial);
// dbias (C) = Σ over the batch and the positions of dy (B, C, spatial): the bias's gradient.
template <class T>
void sum_channels(T* dbias, const T* dy, std::int64_t batch, std::int64_t channels,
                  std::int64_t spatial);

// ---- the module -------------------------------------------------------------------------------

struct Conv2dOptions {
  std::int64_t stride = 1;
  std::int64_t padding = 0;  // zeros added on every side
  bool bias = true;          // false: no "bias" parameter

  // Throws an Error naming the offending field when the options cannot work.
  void validate() const;
};

// Init as PyTorch's: W ~ kaiming-uniform(a = √5), i.e. U(±1/√fan_in), and bias U(±1/√fan_in),
// fan_in = in_channels · kernel².
class Conv2d : public Module {
 public:
  Conv2d(std::int64_t in_channels, std::int64_t out_channels, std::int64_t kernel,
         Conv2dOptions options, Generator& gen);
  Tensor forward(const Tensor& x) const;  // (B, in, H, W) -> (B, out, H', W')

  const Conv2dOptions options;
  Tensor weight;  // (out, in, kernel, kernel)
  Tensor bias;    // (out) or undefined
};

}  // namespace uwaga::nn
