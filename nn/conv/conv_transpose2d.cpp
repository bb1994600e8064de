#include "nn/conv/conv_transpose2d.h"

#include <cmath>
#include <vector>

#include "core/graph.h"
#include "nn/conv/conv2d.h"
#include "nn/init.h"

namespace uwaga::nn {

namespace {

// The convolution whose transpose this is: it maps the (B, C_out, H_out, W_out) output side to
// the (B, C_in, H, W) input side, with the same weight (C_in, C_out, kh, kw) read as conv2d's
// (O, C, kh, kw).
Conv2dGeometry transposed_geometry(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                   std::int64_t stride, std::int64_t padding,
                                   std::int64_t output_padding, const char* op) {
  check_float(x, op);
  check_float(weight, op);
  check_same_dtype(x, weight, op);
  if (x.dim() != 4) fail(op, ": input must be (B, C, H, W), got ", shape_str(x.shape()));
  if (weight.dim() != 4)
    fail(op, ": weight must be (in_channels, out_channels, kh, kw), got ",
         shape_str(weight.shape()));
  if (stride < 1) fail(op, ": stride must be ≥ 1, got ", stride);
  if (padding < 0) fail(op, ": padding must be ≥ 0, got ", padding);
  if (output_padding < 0 || output_padding >= stride)
    fail(op, ": output_padding must be ≥ 0 and smaller than the stride ", stride, ", got ",
         output_padding);
  if (weight.size(0) != x.size(1))
    fail(op, ": input ", shape_str(x.shape()), " has ", x.size(1), " channels but weight ",
         shape_str(weight.shape()), " expects ", weight.size(0));
  if (weight.size(2) < 1 || weight.size(3) < 1)
    fail(op, ": weight ", shape_str(weight.shape()), " has an empty kernel");
  if (bias.defined()) {
    check_same_dtype(x, bias, op);
    if (bias.shape() != Shape{weight.size(1)})
      fail(op, ": bias ", shape_str(bias.shape()), " does not match weight ",
           shape_str(weight.shape()), ": expected (", weight.size(1), ",)");
  }
  Conv2dGeometry g;
  g.batch = x.size(0);
  g.out_channels = x.size(1), g.out_height = x.size(2), g.out_width = x.size(3);
  g.in_channels = weight.size(1), g.kernel_h = weight.size(2), g.kernel_w = weight.size(3);
  g.stride = stride, g.padding = padding;
  g.height = (g.out_height - 1) * stride - 2 * padding + g.kernel_h + output_padding;
  g.width = (g.out_width - 1) * stride - 2 * padding + g.kernel_w + output_padding;
  if (g.out_height < 1 || g.out_width < 1 || g.height < 1 || g.width < 1)
    fail(op, ": input ", shape_str(x.shape()), " with weight ", shape_str(weight.shape()),
         ", stride ", stride, ", padding ", padding, " and output_padding ", output_padding,
         " gives an empty output ", g.height, "×", g.width);
  return g;
}

}  // namespace

Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        std::int64_t stride, std::int64_t padding, std::int64_t output_padding) {
  const Conv2dGeometry g =
      transposed_geometry(x, weight, bias, stride, padding, output_padding, "conv_transpose2d");
  Tensor y = Tensor::empty({g.batch, g.in_channels, g.height, g.width}, x.dtype());
  dispatch_float(x.dtype(), "conv_transpose2d", [&](auto tag) {
    using T = decltype(tag);
    // y = convᵀ(x): what conv2d's backward pass computes from its output gradient.
    conv2d_backward_input<T>(y.data<T>(), x.data<T>(), weight.data<T>(), g);
    if (bias.defined())
      add_channel_bias<T>(y.data<T>(), bias.data<T>(), g.batch, g.in_channels,
                          g.height * g.width);
  });
  return record(y, "conv_transpose2d", {x, weight, bias},
                [x, weight, bias, g](const Tensor& dy) -> std::vector<Tensor> {
    // y = convᵀ_W(x) + bias is linear in x and in W:
    //   dx = conv_W(dy)                              (the transpose of the transpose)
    //   ⟨dy, convᵀ_W(x)⟩ = ⟨conv_W(dy), x⟩ = Σ_b ⟨W · im2col(dy[b]), x[b]⟩,
    //     so dW = Σ_b x[b] · im2col(dy[b])ᵀ — conv2d's weight gradient with x in dY's place
    //   dbias = Σ_{b, i, j} dy
    Tensor dx, dw, db;
    dispatch_float(dy.dtype(), "conv_transpose2d", [&](auto tag) {
      using T = decltype(tag);
      if (x.requires_grad()) {
        dx = Tensor::empty(x.shape(), x.dtype());
        conv2d_forward<T>(dx.data<T>(), dy.data<T>(), weight.data<T>(), nullptr, g);
      }
      if (weight.requires_grad()) {
        dw = Tensor::empty(weight.shape(), weight.dtype());
        conv2d_backward_weight<T>(dw.data<T>(), x.data<T>(), dy.data<T>(), g);
      }
      if (bias.defined() && bias.requires_grad()) {
        db = Tensor::empty(bias.shape(), bias.dtype());
        sum_channels<T>(db.data<T>(), dy.data<T>(), g.batch, g.in_channels, g.height * g.width);
      }
    });
    return {dx, dw, db};
  });
}

// The scatter of the header with plain loops. Each product x[b, c, i, j] · W[c, o, u, v] lands
// on y[b, o, Y, X] with (Y, X) = (i·s − p + u, j·s − p + v) when that lies in the output; the
// backward pass sends dy[b, o, Y, X] back to both factors:
//   dx[b, c, i, j] += dy[b, o, Y, X] · W[c, o, u, v]
//   dW[c, o, u, v] += dy[b, o, Y, X] · x[b, c, i, j]
// and dbias[o] += dy[b, o, Y, X] over every output position.
namespace {

template <class F>
void each_scatter(const Conv2dGeometry& g, F&& f) {
  const std::int64_t Ci = g.out_channels, Co = g.in_channels, H = g.out_height, W = g.out_width;
  const std::int64_t Ho = g.height, Wo = g.width, kh = g.kernel_h, kw = g.kernel_w;
  for (std::int64_t b = 0; b < g.batch; ++b)
    for (std::int64_t c = 0; c < Ci; ++c)
      for (std::int64_t i = 0; i < H; ++i)
        for (std::int64_t j = 0; j < W; ++j)
          for (std::int64_t o = 0; o < Co; ++o)
            for (std::int64_t u = 0; u < kh; ++u)
              for (std::int64_t v = 0; v < kw; ++v) {
                const std::int64_t Y = i * g.stride - g.padding + u;
                const std::int64_t X = j * g.stride - g.padding + v;
                if (Y < 0 || Y >= Ho || X < 0 || X >= Wo) continue;
                f(((b * Ci + c) * H + i) * W + j,          // x[b, c, i, j]
                  ((c * Co + o) * kh + u) * kw + v,        // W[c, o, u, v]
                  ((b * Co + o) * Ho + Y) * Wo + X);       // y[b, o, Y, X]
              }
}

}  // namespace

Tensor conv_transpose2d_reference(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                  std::int64_t stride, std::int64_t padding,
                                  std::int64_t output_padding) {
  const Conv2dGeometry g = transposed_geometry(x, weight, bias, stride, padding, output_padding,
                                               "conv_transpose2d_reference");
  const std::int64_t spatial = g.height * g.width;
  Tensor y = Tensor::zeros({g.batch, g.in_channels, g.height, g.width}, x.dtype());
  dispatch_float(x.dtype(), "conv_transpose2d_reference", [&](auto tag) {
    using T = decltype(tag);
    const T *px = x.data<T>(), *pw = weight.data<T>();
    T* py = y.data<T>();
    each_scatter(g, [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
      py[yi] += px[xi] * pw[wi];
    });
    if (const T* pb = data_or_null<T>(bias))
      for (std::int64_t k = 0; k < y.numel(); ++k) py[k] += pb[(k / spatial) % g.in_channels];
  });
  return record(y, "conv_transpose2d_reference", {x, weight, bias},
                [x, weight, bias, g, spatial](const Tensor& dy) -> std::vector<Tensor> {
    Tensor dx = Tensor::zeros(x.shape(), x.dtype()), dw = Tensor::zeros(weight.shape(), x.dtype());
    Tensor db = bias.defined() ? Tensor::zeros(bias.shape(), x.dtype()) : Tensor();
    dispatch_float(dy.dtype(), "conv_transpose2d_reference", [&](auto tag) {
      using T = decltype(tag);
      const T *px = x.data<T>(), *pw = weight.data<T>(), *pg = dy.data<T>();
      T *pdx = dx.data<T>(), *pdw = dw.data<T>();
      each_scatter(g, [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
        pdx[xi] += pg[yi] * pw[wi];
        pdw[wi] += pg[yi] * px[xi];
      });
      if (db.defined()) {
        T* pdb = db.data<T>();
        for (std::int64_t k = 0; k < dy.numel(); ++k) pdb[(k / spatial) % g.in_channels] += pg[k];
      }
    });
    return {dx, dw, db};
  });
}

void ConvTranspose2dOptions::validate() const {
  if (stride < 1) fail("ConvTranspose2dOptions: stride must be ≥ 1, got ", stride);
  if (padding < 0) fail("ConvTranspose2dOptions: padding must be ≥ 0, got ", padding);
  if (output_padding < 0 || output_padding >= stride)
    fail("ConvTranspose2dOptions: output_padding must be ≥ 0 and smaller than the stride ",
         stride, ", got ", output_padding);
}

ConvTranspose2d::ConvTranspose2d(std::int64_t in_channels, std::int64_t out_channels,
                                 std::int64_t kernel, ConvTranspose2dOptions o, Generator& gen)
    : options(o) {
  if (in_channels < 1) fail("ConvTranspose2d: in_channels must be positive, got ", in_channels);
  if (out_channels < 1) fail("ConvTranspose2d: out_channels must be positive, got ", out_channels);
  if (kernel < 1) fail("ConvTranspose2d: kernel must be positive, got ", kernel);
  o.validate();
  const std::int64_t fan_in = out_channels * kernel * kernel;  // PyTorch: weight.size(1)·k²
  // PyTorch's defaults: weight ~ U(±1/√fan_in) by kaiming_uniform with a = √5, bias likewise.
  weight = register_parameter("weight", {in_channels, out_channels, kernel, kernel}, [&](Tensor& w) {
    init::kaiming_uniform(w, gen, fan_in, std::sqrt(5.0));
  });
  if (o.bias)
    bias = register_parameter("bias", {out_channels}, [&](Tensor& b) {
      init::uniform(b, gen, 1.0 / std::sqrt(static_cast<double>(fan_in)));
    });
}

Tensor ConvTranspose2d::forward(const Tensor& x) const {
  return conv_transpose2d(x, weight, bias, options.stride, options.padding,
                          options.output_padding);
}

}  // namespace uwaga::nn
