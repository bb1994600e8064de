#include "nn/layer_norm_kernels.h"

#include <algorithm>
#include <cmath>

#include "core/l1_block.h"
#include "core/threads.h"

namespace uwaga::nn {

// The same formulas as the plain loops of nn/layer_norm.cpp (read those first); what differs is
// only the order of the work. The sums accumulate in T (the row is short: 64 to 256 values) and
// `omp simd` lets the compiler reorder them into vector lanes. The two-pass loops below go
// through blocks of rows that stay in the L1 cache between the passes (l1_block_rows,
// core/l1_block.h).

template <class T>
void layer_norm_forward(T* out, T* mean, T* rstd, const T* x, const T* weight, const T* bias,
                        std::int64_t rows, std::int64_t d, double eps) {
  const T inv_d = T(1) / static_cast<T>(d);
  const std::int64_t block = l1_block_rows(d * static_cast<std::int64_t>(sizeof(T)));
  parallel_for(rows, rows * d > kParallelThreshold, [&](std::int64_t r0, std::int64_t r1) {
    // A block's μ and rstd first, then its outputs: a row is a few vectors long, and its
    // statistics are chains of dependent sums; independent rows side by side overlap them.
    for (std::int64_t b0 = r0; b0 < r1; b0 += block) {
      const std::int64_t b1 = std::min(r1, b0 + block);
      for (std::int64_t r = b0; r < b1; ++r) {
        const T* xr = x + r * d;  // (d)
        T m = 0;
#pragma omp simd reduction(+ : m)
        for (std::int64_t j = 0; j < d; ++j) m += xr[j];
        m *= inv_d;
        T v = 0;
#pragma omp simd reduction(+ : v)
        for (std::int64_t j = 0; j < d; ++j) v += (xr[j] - m) * (xr[j] - m);
        v *= inv_d;
        mean[r] = m;
        rstd[r] = T(1) / std::sqrt(v + static_cast<T>(eps));
      }
      for (std::int64_t r = b0; r < b1; ++r) {
        const T* xr = x + r * d;
        const T m = mean[r], s = rstd[r];
        T* o = out + r * d;
#pragma omp simd
        for (std::int64_t j = 0; j < d; ++j) o[j] = (xr[j] - m) * s * weight[j] + bias[j];
      }
    }
  });
}

// The backward pass, derived in nn/layer_norm.cpp:
//   dβ = Σ_rows dy,   dγ = Σ_rows dy ⊙ x̂,   dx = rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ ⊙ x̂))
// dx, dweight and dbias are written, not accumulated into (null when not wanted).

// dγ[j] = Σ_r dy[r][j] · x̂[r][j] and dβ[j] = Σ_r dy[r][j] for the n features j0 … j0 + n − 1,
// summed over the rows in row order. Width is n when known when compiling (0: not known).
template <class T, std::int64_t Width>
void gamma_beta_sums(T* dw, T* db, const T* dout, const T* x, const T* mean, const T* rstd,
                     std::int64_t rows, std::int64_t d, std::int64_t j0, std::int64_t n) {
  const std::int64_t width = Width > 0 ? Width : n;
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d + j0;
    const T* dy = dout + r * d + j0;
    const T m = mean[r], s = rstd[r];
#pragma omp simd
    for (std::int64_t j = 0; j < width; ++j) {
      dw[j] += dy[j] * (xr[j] - m) * s;  // dγ += dy ⊙ x̂
      db[j] += dy[j];                    // dβ += dy
    }
  }
}

template <class T>
void layer_norm_backward(T* dx, T* dweight, T* dbias, const T* dout, const T* x, const T* weight,
                         const T* mean, const T* rstd, std::int64_t rows, std::int64_t d) {
  if (dx) {
    const T inv_d = T(1) / static_cast<T>(d);
    parallel_for(rows, rows * d > kParallelThreshold, [&](std::int64_t r0, std::int64_t r1) {
      // γ as a local pointer: read through the lambda's reference, GCC 12 reloads it in the loop
      // below and vectorises weight[j] as a gather (a quarter of this function's time).
      const T* gamma = weight;
      // As in the forward pass, a block's two means first, then its dx.
      const std::int64_t block = l1_block_rows(2 * d * static_cast<std::int64_t>(sizeof(T)));  // x and dy
      T mean_dxhat[64], mean_dxhat_xhat[64];
      for (std::int64_t b0 = r0; b0 < r1; b0 += block) {
        const std::int64_t n = std::min(block, r1 - b0);
        for (std::int64_t i = 0; i < n; ++i) {
          const std::int64_t r = b0 + i;
          const T* xr = x + r * d;
          const T* dy = dout + r * d;
          const T m = mean[r], s = rstd[r];
          T sum_dxhat = 0, sum_dxhat_xhat = 0;
#pragma omp simd reduction(+ : sum_dxhat, sum_dxhat_xhat)
          for (std::int64_t j = 0; j < d; ++j) {
            const T xhat = (xr[j] - m) * s;
            const T dxhat = dy[j] * gamma[j];
            sum_dxhat += dxhat;
            sum_dxhat_xhat += dxhat * xhat;
          }
          mean_dxhat[i] = sum_dxhat * inv_d;
          mean_dxhat_xhat[i] = sum_dxhat_xhat * inv_d;
        }
        for (std::int64_t i = 0; i < n; ++i) {
          const std::int64_t r = b0 + i;
          const T* xr = x + r * d;
          const T* dy = dout + r * d;
          const T m = mean[r], s = rstd[r], a = mean_dxhat[i], b = mean_dxhat_xhat[i];
          T* dxr = dx + r * d;
#pragma omp simd
          for (std::int64_t j = 0; j < d; ++j) {
            const T xhat = (xr[j] - m) * s;
            const T dxhat = dy[j] * gamma[j];
            dxr[j] = s * (dxhat - a - xhat * b);
          }
        }
      }
    });
  }
  // γ and β gather over all rows. Threads take blocks of 16 features and sum each over the rows
  // in row order, so the sums are the same on any thread count.
  if (!dweight && !dbias) return;
  constexpr std::int64_t kBlock = 16;
  const std::int64_t blocks = (d + kBlock - 1) / kBlock;
  parallel_for(blocks, rows * d > kParallelThreshold, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::int64_t j0 = b * kBlock, n = std::min(d - j0, kBlock);
      T dw[kBlock] = {}, db[kBlock] = {};
      // A whole block has a width the compiler knows, so dw and db stay in vector registers;
      // with the width a variable they went to the stack and back on every row.
      if (n == kBlock) gamma_beta_sums<T, kBlock>(dw, db, dout, x, mean, rstd, rows, d, j0, kBlock);
      else gamma_beta_sums<T, 0>(dw, db, dout, x, mean, rstd, rows, d, j0, n);
      if (dweight) std::copy(dw, dw + n, dweight + j0);
      if (dbias) std::copy(db, db + n, dbias + j0);
    }
  });
}

template void layer_norm_forward<float>(float*, float*, float*, const float*, const float*,
                                        const float*, std::int64_t, std::int64_t, double);
template void layer_norm_forward<double>(double*, double*, double*, const double*, const double*,
                                         const double*, std::int64_t, std::int64_t, double);
template void layer_norm_backward<float>(float*, float*, float*, const float*, const float*,
                                         const float*, const float*, const float*, std::int64_t,
                                         std::int64_t);
template void layer_norm_backward<double>(double*, double*, double*, const double*,
                                          const double*, const double*, const double*,
                                          const double*, std::int64_t, std::int64_t);

}  // namespace uwaga::nn
