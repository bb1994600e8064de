#include "optim/clip.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/threads.h"

namespace uwaga::optim {

// Σ g² over a run of one gradient, in double whatever the dtype: summing a few million float
// squares in float would lose the small ones. In 8 interleaved partial sums, added up in a fixed
// order at the end: one running sum would chain every addition to the one before it (no
// vectorising, a few cycles per element).
template <class T>
double run_sum_of_squares(const T* g, std::int64_t n) {
  constexpr std::int64_t kLanes = 8;
  double lanes[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
#pragma omp simd
    for (std::int64_t j = 0; j < kLanes; ++j)
      lanes[j] += static_cast<double>(g[i + j]) * static_cast<double>(g[i + j]);
  double sum = 0;
  for (std::int64_t j = 0; j < kLanes; ++j) sum += lanes[j];
  for (; i < n; ++i) sum += static_cast<double>(g[i]) * static_cast<double>(g[i]);
  return sum;
}

// Σ g² over one gradient: runs of a fixed length summed on the threads, their sums added in
// order, so the norm is the same on any thread count (GPT-2's 124 M gradients are 0.5 GB to read:
// one core alone was 2.5 % of a step).
template <class T>
double sum_of_squares(const T* g, std::int64_t n) {
  constexpr std::int64_t kRun = 1 << 16;
  std::vector<double> runs(static_cast<std::size_t>((n + kRun - 1) / kRun));
  const std::int64_t count = static_cast<std::int64_t>(runs.size());
  parallel_for(count, n > kParallelThreshold, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r)
      runs[static_cast<std::size_t>(r)] =
          run_sum_of_squares(g + r * kRun, std::min(kRun, n - r * kRun));
  });
  double sum = 0;
  for (double s : runs) sum += s;
  return sum;
}

template <class T>
void scale(T* g, std::int64_t n, double factor) {
  const T f = static_cast<T>(factor);
  parallel_for(n, n > kParallelThreshold, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) g[i] *= f;
  });
}

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  if (std::isnan(max_norm) || max_norm < 0)
    fail("clip_grad_norm: max_norm must be >= 0 (0 measures the norm without clipping), got ",
         max_norm);
  init_threads();
  std::vector<Tensor> grads;
  for (const Tensor& p : params) {
    check_defined(p, "clip_grad_norm");
    Tensor g = p.grad();
    if (!g.defined()) continue;  // parameters without a gradient take no part
    check_float(g, "clip_grad_norm");
    grads.push_back(g);
  }
  double total = 0;
  for (const Tensor& g : grads)
    total += dispatch_float(g.dtype(), "clip_grad_norm", [&](auto tag) {
      using T = decltype(tag);
      return sum_of_squares(g.data<T>(), g.numel());
    });
  // A NaN keeps the sign bit of the NaN gradient it came from; a norm has none ("nan", not "-nan").
  const double norm =
      std::isnan(total) ? std::numeric_limits<double>::quiet_NaN() : std::sqrt(total);
  // A non-finite norm is reported, not spread: the gradients stay as they are, so the caller
  // can see which ones hold the inf or NaN (and skip the step).
  if (max_norm > 0 && std::isfinite(norm) && norm > max_norm) {
    const double factor = max_norm / norm;
    for (Tensor& g : grads) {
      dispatch_float(g.dtype(), "clip_grad_norm", [&](auto tag) {
        using T = decltype(tag);
        scale(g.data<T>(), g.numel(), factor);
      });
      g.bump_version();
    }
  }
  return norm;
}

}  // namespace uwaga::optim
