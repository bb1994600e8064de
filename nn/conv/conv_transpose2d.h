#pragma once
// Transposed 2-D convolution of NCHW feature maps, as PyTorch's nn.ConvTranspose2d (groups 1,
// dilation 1): every input pixel adds a copy of the kernel, scaled by its value, into the output
// at stride s, shifted up and left by the padding p:
//   y[b, o, i·s − p + u, j·s − p + v] += x[b, c, i, j] · W[c, o, u, v],   then y += bias[o]
// keeping only the output positions inside
//   H_out = (H − 1)·s − 2p + kh + output_padding   (and W_out the same way).
// A strided conv2d maps s different input sizes to the same output size; output_padding (< s)
// picks which of them the transposed convolution produces, adding rows and columns at the bottom
// and right.
// W is (C_in, C_out, kh, kw) and bias (C_out), PyTorch's layouts and names. With kernel 4,
// stride 2, padding 1 it doubles H and W exactly: the upsampling layer of a keypoint decoder.
//
// It is the adjoint (transpose) of conv2d: for the convolution z ↦ conv2d(z, W) from (C_out, H_out,
// W_out) maps to (C_in, H, W) maps, ⟨conv2d(z, W), x⟩ = ⟨z, conv_transpose2d(x, W)⟩ — PyTorch
// defines it as conv2d's gradient with respect to its input. So its kernels are conv2d's with the
// roles swapped (nn/conv/conv2d.h), none of them a second copy:
//   forward       y  = convᵀ(x)   conv2d's backward_input (Wᵀ x per image, col2im)
//   dx            dx = conv(dy)   conv2d's forward (im2col of dy, one GEMM per image)
//   dW            dW = Σ_b x[b] · im2col(dy[b])ᵀ   conv2d's backward_weight, x and dy swapped
// conv_transpose2d_reference scatters with plain loops as in the formula; the tests compare them.
#include <cstdint>

#include "core/random.h"
#include "nn/module.h"

namespace uwaga::nn {

// x (B, C_in, H, W), weight (C_in, C_out, kh, kw), bias (C_out) or undefined (none)
//   -> (B, C_out, H_out, W_out).  0 ≤ output_padding < stride.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        std::int64_t stride, std::int64_t padding,
                        std::int64_t output_padding = 0);
Tensor conv_transpose2d_reference(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                  std::int64_t stride, std::int64_t padding,
                                  std::int64_t output_padding = 0);

struct ConvTranspose2dOptions {
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  std::int64_t output_padding = 0;  // extra rows/columns at the bottom/right, < stride
  bool bias = true;                 // false: no "bias" parameter

  // Throws an Error naming the offending field when the options cannot work.
  void validate() const;
};

// Init as PyTorch's: W ~ kaiming-uniform(a = √5) and bias U(±1/√fan_in), where PyTorch takes
// fan_in from the weight's second dim: fan_in = out_channels · kernel².
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(std::int64_t in_channels, std::int64_t out_channels, std::int64_t kernel,
                  ConvTranspose2dOptions options, Generator& gen);
  Tensor forward(const Tensor& x) const;  // (B, in, H, W) -> (B, out, H_out, W_out)

  const ConvTranspose2dOptions options;
  Tensor weight;  // (in, out, kernel, kernel)
  Tensor bias;    // (out) or undefined
};

}  // namespace uwaga::nn
