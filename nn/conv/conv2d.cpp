#include "nn/conv/conv2d.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "core/matmul.h"
#include "core/threads.h"
#include "nn/init.h"

namespace uwaga::nn {

namespace {

// Convolutions with fewer multiply-adds than this run on one thread.
constexpr std::int64_t kParallelConvWork = std::int64_t(1) << 20;

// A column matrix per thread, grown to the largest seen and then reused: training convolves the
// same shapes step after step, so after the first step no buffer is allocated (core/matmul.cpp
// keeps its Bᵀ the same way). Each thread uses one at a time.
template <class T>
T* scratch(std::int64_t n) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < static_cast<std::size_t>(n)) buffer.resize(static_cast<std::size_t>(n));
  return buffer.data();
}

// The output columns j0 ≤ j < j1 whose input column j·s − p + v lies inside [0, W): left of j0
// and from j1 on, the kernel tap v reads padding.
std::pair<std::int64_t, std::int64_t> inside(std::int64_t v, std::int64_t W, std::int64_t Wo,
                                             std::int64_t s, std::int64_t p) {
  const std::int64_t lo = p - v;          // j·s ≥ lo
  const std::int64_t hi = W - 1 + p - v;  // j·s ≤ hi
  const std::int64_t j1 = hi < 0 ? 0 : std::min(Wo, hi / s + 1);
  const std::int64_t j0 = lo <= 0 ? 0 : (lo + s - 1) / s;
  return {std::min(j0, j1), j1};
}

}  // namespace

// Row r = (c·kh + u)·kw + v of col holds, at column i·W' + j, x[c, i·s − p + u, j·s − p + v]
// (0 outside the image). The rows of one channel c are independent of the others', so channels
// run in parallel.
template <class T>
void im2col(T* col, const T* x, const Conv2dGeometry& g) {
  const std::int64_t H = g.height, W = g.width, Ho = g.out_height, Wo = g.out_width;
  const std::int64_t s = g.stride, p = g.padding, kh = g.kernel_h, kw = g.kernel_w;
  parallel_for(g.in_channels, g.patch() * g.positions() > kParallelThreshold,
               [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t c = c0; c < c1; ++c) {
      const T* xc = x + c * H * W;  // (H, W)
      for (std::int64_t u = 0; u < kh; ++u)
        for (std::int64_t v = 0; v < kw; ++v) {
          T* row = col + ((c * kh + u) * kw + v) * Ho * Wo;  // (H', W')
          const auto run = inside(v, W, Wo, s, p);  // not a structured binding: clang's
          const std::int64_t j0 = run.first, j1 = run.second;  // OpenMP cannot capture one
          for (std::int64_t i = 0; i < Ho; ++i) {
            T* r = row + i * Wo;
            const std::int64_t y = i * s - p + u;
            if (y < 0 || y >= H) {
              std::fill(r, r + Wo, T(0));
              continue;
            }
            const T* xr = xc + y * W;
            std::fill(r, r + j0, T(0));
            if (s == 1 && j1 > j0)  // one run of x's row
              std::copy(xr + (j0 - p + v), xr + (j1 - p + v), r + j0);
            else
              for (std::int64_t j = j0; j < j1; ++j) r[j] = xr[j * s - p + v];
            std::fill(r + j1, r + Wo, T(0));
          }
        }
    }
  });
}

// The same walk as im2col with the copy reversed: every entry of col is added to the x it was
// copied from (padding entries came from nowhere and are dropped). A pixel read by several
// kernel taps gets the sum of their entries, in a fixed order.
template <class T>
void col2im_add(T* x, const T* col, const Conv2dGeometry& g) {
  const std::int64_t H = g.height, W = g.width, Ho = g.out_height, Wo = g.out_width;
  const std::int64_t s = g.stride, p = g.padding, kh = g.kernel_h, kw = g.kernel_w;
  parallel_for(g.in_channels, g.patch() * g.positions() > kParallelThreshold,
               [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t c = c0; c < c1; ++c) {
      T* xc = x + c * H * W;  // (H, W)
      for (std::int64_t u = 0; u < kh; ++u)
        for (std::int64_t v = 0; v < kw; ++v) {
          const T* row = col + ((c * kh + u) * kw + v) * Ho * Wo;  // (H', W')
          const auto run = inside(v, W, Wo, s, p);  // not a structured binding: clang's
          const std::int64_t j0 = run.first, j1 = run.second;  // OpenMP cannot capture one
          for (std::int64_t i = 0; i < Ho; ++i) {
            const std::int64_t y = i * s - p + u;
            if (y < 0 || y >= H) continue;
            const T* r = row + i * Wo;
            T* xr = xc + y * W;
            if (s == 1 && j1 > j0) {  // a run of x's row: contiguous, vectorised
              T* dst = xr + (j0 - p + v);
              const T* src = r + j0;
#pragma omp simd
              for (std::int64_t j = 0; j < j1 - j0; ++j) dst[j] += src[j];
            } else {
              for (std::int64_t j = j0; j < j1; ++j) xr[j * s - p + v] += r[j];
            }
          }
        }
    }
  });
}

template <class T>
void add_channel_bias(T* y, const T* bias, std::int64_t batch, std::int64_t channels,
                      std::int64_t spatial) {
  parallel_for(batch * channels, batch * channels * spatial > kParallelThreshold,
               [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      T* row = y + r * spatial;
      const T b = bias[r % channels];
#pragma omp simd
      for (std::int64_t k = 0; k < spatial; ++k) row[k] += b;
    }
  });
}

// Each channel sums its planes in batch order, whatever the thread count.
template <class T>
void sum_channels(T* dbias, const T* dy, std::int64_t batch, std::int64_t channels,
                  std::int64_t spatial) {
  parallel_for(channels, batch * channels * spatial > kParallelThreshold,
               [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t c = c0; c < c1; ++c) {
      T total = 0;
      for (std::int64_t b = 0; b < batch; ++b) {
        const T* row = dy + (b * channels + c) * spatial;
        T part = 0;
#pragma omp simd reduction(+ : part)
        for (std::int64_t k = 0; k < spatial; ++k) part += row[k];
        total += part;
      }
      dbias[c] = total;
    }
  });
}

// Images are independent, so a batch runs in parallel, one image per thread at a time, each
// with its own column buffer and single-threaded GEMMs. A single image (inference) instead
// parallelises inside: im2col over channels, the GEMM over output channels.
//   Y[b] (O, H'W') = W (O, C·kh·kw) · col[b] (C·kh·kw, H'W')  [+ bias, put in Y first: β = 1]
template <class T>
void conv2d_forward(T* y, const T* x, const T* weight, const T* bias, const Conv2dGeometry& g) {
  init_threads();
  const std::int64_t P = g.patch(), N = g.positions(), O = g.out_channels;
  const std::int64_t image = g.in_channels * g.height * g.width;
  const bool batch_parallel = g.batch > 1 && g.batch * O * P * N > kParallelConvWork;
  parallel_for(g.batch, batch_parallel, [&](std::int64_t b0, std::int64_t b1) {
    T* col = g.pointwise() ? nullptr : scratch<T>(P * N);
    for (std::int64_t b = b0; b < b1; ++b) {
      const T* xb = x + b * image;  // (C, H, W)
      T* yb = y + b * O * N;        // (O, H', W')
      if (bias) {
        for (std::int64_t o = 0; o < O; ++o) std::fill(yb + o * N, yb + (o + 1) * N, bias[o]);
      }
      if (!g.pointwise()) im2col(col, xb, g);
      gemm<T>(false, false, O, N, P, T(1), weight, P, g.pointwise() ? xb : col, N,
              bias ? T(1) : T(0), yb, N);
    }
  });
}

// In the forward pass Y[b] = W col[b] + bias, and col[b] = im2col(x[b]) only copies values of
// x[b] (a pixel into as many columns as kernel taps see it). So
//   dcol[b] (C·kh·kw, H'W') = Wᵀ (C·kh·kw, O) · dY[b] (O, H'W')
//   dx[b] = im2colᵀ(dcol[b]) = col2im_add: each entry back onto the pixel it was copied from.
// Images are independent: in parallel, as the forward pass.
template <class T>
void conv2d_backward_input(T* dx, const T* dy, const T* weight, const Conv2dGeometry& g) {
  init_threads();
  const std::int64_t P = g.patch(), N = g.positions(), O = g.out_channels;
  const std::int64_t image = g.in_channels * g.height * g.width;
  const bool batch_parallel = g.batch > 1 && g.batch * O * P * N > kParallelConvWork;
  parallel_for(g.batch, batch_parallel, [&](std::int64_t b0, std::int64_t b1) {
    T* dcol = g.pointwise() ? nullptr : scratch<T>(P * N);
    for (std::int64_t b = b0; b < b1; ++b) {
      T* dxb = dx + b * image;  // (C, H, W)
      if (g.pointwise()) {      // col is x itself: dx[b] = Wᵀ dY[b]
        gemm<T>(true, false, P, N, O, T(1), weight, P, dy + b * O * N, N, T(0), dxb, N);
        continue;
      }
      gemm<T>(true, false, P, N, O, T(1), weight, P, dy + b * O * N, N, T(0), dcol, N);
      std::fill(dxb, dxb + image, T(0));
      col2im_add(dxb, dcol, g);
    }
  });
}

// In the forward pass Y[b] = W col[b] + bias, for every image with the same W. So
//   dW (O, C·kh·kw) = Σ_b dY[b] (O, H'W') · col[b]ᵀ (H'W', C·kh·kw)
// The images are added in order into one dW (GEMM with β = 1 after the first), so the sum does
// not depend on the thread count; the GEMM itself runs on all threads. col[b] is rebuilt here
// rather than kept from the forward pass: keeping it would hold C·kh·kw·H'W' values per image
// (9× the input for a 3×3 kernel) from forward to backward, for every convolution of a model.
template <class T>
void conv2d_backward_weight(T* dweight, const T* dy, const T* x, const Conv2dGeometry& g) {
  init_threads();
  const std::int64_t P = g.patch(), N = g.positions(), O = g.out_channels;
  const std::int64_t image = g.in_channels * g.height * g.width;
  if (g.batch == 0) std::fill(dweight, dweight + O * P, T(0));
  T* col = g.pointwise() ? nullptr : scratch<T>(P * N);
  for (std::int64_t b = 0; b < g.batch; ++b) {
    const T* xb = x + b * image;
    if (!g.pointwise()) im2col(col, xb, g);
    gemm<T>(false, true, O, P, N, T(1), dy + b * O * N, N, g.pointwise() ? xb : col, N,
            b == 0 ? T(0) : T(1), dweight, P);
  }
}

#define UWAGA_CONV2D_KERNELS(T)                                                                 \
  template void im2col<T>(T*, const T*, const Conv2dGeometry&);                                 \
  template void col2im_add<T>(T*, const T*, const Conv2dGeometry&);                             \
  template void conv2d_forward<T>(T*, const T*, const T*, const T*, const Conv2dGeometry&);     \
  template void conv2d_backward_input<T>(T*, const T*, const T*, const Conv2dGeometry&);        \
  template void conv2d_backward_weight<T>(T*, const T*, const T*, const Conv2dGeometry&);       \
  template void add_channel_bias<T>(T*, const T*, std::int64_t, std::int64_t, std::int64_t);    \
  template void sum_channels<T>(T*, const T*, std::int64_t, std::int64_t, std::int64_t);
UWAGA_CONV2D_KERNELS(float)
UWAGA_CONV2D_KERNELS(double)
#undef UWAGA_CONV2D_KERNELS

// ---- the autograd ops -------------------------------------------------------------------------

namespace {

Conv2dGeometry conv2d_geometry(const Tensor& x, const Tensor& weight, const Tensor& bias,
                               std::int64_t stride, std::int64_t padding, const char* op) {
  check_float(x, op);
  check_float(weight, op);
  check_same_dtype(x, weight, op);
  if (x.dim() != 4) fail(op, ": input must be (B, C, H, W), got ", shape_str(x.shape()));
  if (weight.dim() != 4)
    fail(op, ": weight must be (out_channels, in_channels, kh, kw), got ",
         shape_str(weight.shape()));
  if (stride < 1) fail(op, ": stride must be ≥ 1, got ", stride);
  if (padding < 0) fail(op, ": padding must be ≥ 0, got ", padding);
  Conv2dGeometry g;
  g.batch = x.size(0), g.in_channels = x.size(1), g.height = x.size(2), g.width = x.size(3);
  g.out_channels = weight.size(0), g.kernel_h = weight.size(2), g.kernel_w = weight.size(3);
  g.stride = stride, g.padding = padding;
  if (weight.size(1) != g.in_channels)
    fail(op, ": input ", shape_str(x.shape()), " has ", g.in_channels, " channels but weight ",
         shape_str(weight.shape()), " expects ", weight.size(1));
  if (g.kernel_h < 1 || g.kernel_w < 1)
    fail(op, ": weight ", shape_str(weight.shape()), " has an empty kernel");
  if (bias.defined()) {
    check_same_dtype(x, bias, op);
    if (bias.shape() != Shape{g.out_channels})
      fail(op, ": bias ", shape_str(bias.shape()), " does not match weight ",
           shape_str(weight.shape()), ": expected (", g.out_channels, ",)");
  }
  const std::int64_t padded_h = g.height + 2 * padding, padded_w = g.width + 2 * padding;
  if (g.kernel_h > padded_h || g.kernel_w > padded_w)
    fail(op, ": kernel ", g.kernel_h, "×", g.kernel_w, " (weight ", shape_str(weight.shape()),
         ") is larger than the padded input ", padded_h, "×", padded_w, " (input ",
         shape_str(x.shape()), ", padding ", padding, ")");
  g.out_height = (padded_h - g.kernel_h) / stride + 1;
  g.out_width = (padded_w - g.kernel_w) / stride + 1;
  return g;
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::int64_t stride,
              std::int64_t padding) {
  const Conv2dGeometry g = conv2d_geometry(x, weight, bias, stride, padding, "conv2d");
  Tensor y = Tensor::empty({g.batch, g.out_channels, g.out_height, g.out_width}, x.dtype());
  dispatch_float(x.dtype(), "conv2d", [&](auto tag) {
    using T = decltype(tag);
    conv2d_forward<T>(y.data<T>(), x.data<T>(), weight.data<T>(), data_or_null<T>(bias), g);
  });
  return record(y, "conv2d", {x, weight, bias},
                [x, weight, bias, g](const Tensor& dy) -> std::vector<Tensor> {
    Tensor dx, dw, db;
    dispatch_float(dy.dtype(), "conv2d", [&](auto tag) {
      using T = decltype(tag);
      if (x.requires_grad()) {
        dx = Tensor::empty(x.shape(), x.dtype());
        conv2d_backward_input<T>(dx.data<T>(), dy.data<T>(), weight.data<T>(), g);
      }
      if (weight.requires_grad()) {
        dw = Tensor::empty(weight.shape(), weight.dtype());
        conv2d_backward_weight<T>(dw.data<T>(), dy.data<T>(), x.data<T>(), g);
      }
      if (bias.defined() && bias.requires_grad()) {  // dbias = Σ_{b, i, j} dY
        db = Tensor::empty(bias.shape(), bias.dtype());
        sum_channels<T>(db.data<T>(), dy.data<T>(), g.batch, g.out_channels, g.positions());
      }
    });
    return {dx, dw, db};
  });
}

// The formula of the header, one output value at a time; the backward pass sends each product
// W[o, c, u, v] · x[b, c, y, x'] back to both its factors:
//   dx[b, c, y, x'] += dY[b, o, i, j] · W[o, c, u, v]
//   dW[o, c, u, v]  += dY[b, o, i, j] · x[b, c, y, x']
// over every (b, o, i, j, c, u, v) whose input pixel (y, x') = (i·s − p + u, j·s − p + v) lies
// inside the image, and dbias[o] += dY[b, o, i, j].
namespace {

template <class T>
struct ReferenceConv {
  const Conv2dGeometry& g;
  // The input pixel under kernel tap (u, v) of output (i, j), or false where it is padding.
  bool pixel(std::int64_t i, std::int64_t j, std::int64_t u, std::int64_t v, std::int64_t& y,
             std::int64_t& x) const {
    y = i * g.stride - g.padding + u;
    x = j * g.stride - g.padding + v;
    return y >= 0 && y < g.height && x >= 0 && x < g.width;
  }
  std::int64_t x_at(std::int64_t b, std::int64_t c, std::int64_t y, std::int64_t x) const {
    return ((b * g.in_channels + c) * g.height + y) * g.width + x;
  }
  std::int64_t w_at(std::int64_t o, std::int64_t c, std::int64_t u, std::int64_t v) const {
    return ((o * g.in_channels + c) * g.kernel_h + u) * g.kernel_w + v;
  }
  std::int64_t y_at(std::int64_t b, std::int64_t o, std::int64_t i, std::int64_t j) const {
    return ((b * g.out_channels + o) * g.out_height + i) * g.out_width + j;
  }

  // Calls f(x index, weight index, y index) for every product of the sum.
  template <class F>
  void each_product(F&& f) const {
    for (std::int64_t b = 0; b < g.batch; ++b)
      for (std::int64_t o = 0; o < g.out_channels; ++o)
        for (std::int64_t i = 0; i < g.out_height; ++i)
          for (std::int64_t j = 0; j < g.out_width; ++j)
            for (std::int64_t c = 0; c < g.in_channels; ++c)
              for (std::int64_t u = 0; u < g.kernel_h; ++u)
                for (std::int64_t v = 0; v < g.kernel_w; ++v) {
                  std::int64_t y, x;
                  if (pixel(i, j, u, v, y, x))
                    f(x_at(b, c, y, x), w_at(o, c, u, v), y_at(b, o, i, j));
                }
  }
};

}  // namespace

Tensor conv2d_reference(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        std::int64_t stride, std::int64_t padding) {
  const Conv2dGeometry g = conv2d_geometry(x, weight, bias, stride, padding, "conv2d_reference");
  Tensor y = Tensor::zeros({g.batch, g.out_channels, g.out_height, g.out_width}, x.dtype());
  dispatch_float(x.dtype(), "conv2d_reference", [&](auto tag) {
    using T = decltype(tag);
    const T *px = x.data<T>(), *pw = weight.data<T>();
    T* py = y.data<T>();
    ReferenceConv<T>{g}.each_product([&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
      py[yi] += pw[wi] * px[xi];
    });
    if (bias.defined())
      add_channel_bias<T>(py, bias.data<T>(), g.batch, g.out_channels, g.positions());
  });
  return record(y, "conv2d_reference", {x, weight, bias},
                [x, weight, bias, g](const Tensor& dy) -> std::vector<Tensor> {
    Tensor dx = Tensor::zeros(x.shape(), x.dtype()), dw = Tensor::zeros(weight.shape(), x.dtype());
    Tensor db = bias.defined() ? Tensor::zeros(bias.shape(), x.dtype()) : Tensor();
    dispatch_float(dy.dtype(), "conv2d_reference", [&](auto tag) {
      using T = decltype(tag);
      const T *px = x.data<T>(), *pw = weight.data<T>(), *pg = dy.data<T>();
      T *pdx = dx.data<T>(), *pdw = dw.data<T>();
      ReferenceConv<T>{g}.each_product([&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
        pdx[xi] += pg[yi] * pw[wi];
        pdw[wi] += pg[yi] * px[xi];
      });
      if (db.defined()) {
        T* pdb = db.data<T>();
        for (std::int64_t k = 0; k < dy.numel(); ++k)
          pdb[(k / g.positions()) % g.out_channels] += pg[k];  // dy (B, O, H', W')
      }
    });
    return {dx, dw, db};
  });
}

// ---- the module -------------------------------------------------------------------------------

void Conv2dOptions::validate() const {
  if (stride < 1) fail("Conv2dOptions: stride must be ≥ 1, got ", stride);
  if (padding < 0) fail("Conv2dOptions: padding must be ≥ 0, got ", padding);
}

Conv2d::Conv2d(std::int64_t in_channels, std::int64_t out_channels, std::int64_t kernel,
               Conv2dOptions o, Generator& gen)
    : options(o) {
  if (in_channels < 1) fail("Conv2d: in_channels must be positive, got ", in_channels);
  if (out_channels < 1) fail("Conv2d: out_channels must be positive, got ", out_channels);
  if (kernel < 1) fail("Conv2d: kernel must be positive, got ", kernel);
  o.validate();
  const std::int64_t fan_in = in_channels * kernel * kernel;
  // PyTorch's defaults: weight ~ U(±1/√fan_in) by kaiming_uniform with a = √5, bias likewise.
  weight = register_parameter("weight", {out_channels, in_channels, kernel, kernel}, [&](Tensor& w) {
    init::kaiming_uniform(w, gen, fan_in, std::sqrt(5.0));
  });
  if (o.bias)
    bias = register_parameter("bias", {out_channels}, [&](Tensor& b) {
      init::uniform(b, gen, 1.0 / std::sqrt(static_cast<double>(fan_in)));
    });
}

Tensor Conv2d::forward(const Tensor& x) const {
  return conv2d(x, weight, bias, options.stride, options.padding);
}

}  // namespace uwaga::nn
