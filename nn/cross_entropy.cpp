#include "nn/cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/elementwise.h"
#include "core/fast_math.h"
#include "core/graph.h"
#include "core/indexing.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "core/threads.h"
#include "nn/softmax.h"

namespace uwaga::nn {
namespace {

// Checks shapes, dtypes and every target; returns how many rows count (target ≠ ignore_index).
std::int64_t check_inputs(const Tensor& logits, const Tensor& targets,
                          const CrossEntropyOptions& options, const char* op) {
  check_float(logits, op);
  check_defined(targets, op);
  if (logits.dim() != 2)
    fail(op, ": logits must be 2-D (N, C), got shape ", shape_str(logits.shape()));
  if (targets.dtype() != DType::Int64)
    fail(op, ": targets must be int64 class indices, got ", dtype_name(targets.dtype()),
         " of shape ", shape_str(targets.shape()));
  const std::int64_t N = logits.shape()[0], C = logits.shape()[1];
  if (targets.dim() != 1 || targets.shape()[0] != N)
    fail(op, ": targets of shape ", shape_str(targets.shape()), " do not match logits of shape ",
         shape_str(logits.shape()), ": expected (", N, ",)");
  if (!(options.label_smoothing >= 0.0 && options.label_smoothing <= 1.0))
    fail(op, ": label_smoothing must be in [0, 1], got ", options.label_smoothing);
  const std::int64_t* t = targets.data<std::int64_t>();
  std::int64_t counted = 0;
  for (std::int64_t r = 0; r < N; ++r) {
    if (t[r] == options.ignore_index) continue;
    if (t[r] < 0 || t[r] >= C)
      fail(op, ": target ", t[r], " in row ", r, " is out of range for ", C,
           " classes (valid range [0, ", C, "), or ignore_index ", options.ignore_index, ")");
    ++counted;
  }
  return counted;
}

// What the fused backward needs from the forward pass.
struct CrossEntropySaved {
  Tensor probs;    // (N, C) softmax(z), row by row; undefined when no gradient is needed
  Tensor targets;  // (N,) int64
  std::int64_t n_counted = 0;  // rows whose target is not ignore_index
  std::int64_t ignore_index = -100;
  double label_smoothing = 0.0;
};

// One row: writes softmax(z) into p (if p is not null) and returns
//   ℓ = −Σ_c q_c log p_c = −(1 − ε) log p_t − (ε / C) Σ_c log p_c,
// with m = max_c z_c (so no exp overflows), s = Σ_c exp(z_c − m) and
//   log p_c = (z_c − m) − log s,   Σ_c log p_c = (Σ_c z_c − C m) − C log s.
// The shift by m comes first: z_t − (m + log s) would lose log s in m's rounding when |m| is
// large (logits 1e30, 1e30 would give a loss of 0, not log 2), while z_t − m in double is within
// 2⁻⁵³ relative for float32 logits (exact when their exponents are close) and for float64 ones
// close to m. The smoothing term is skipped when ε = 0:
// a −∞ logit makes Σ_c log p_c = −∞, and 0 · (−∞) would be NaN. The first pass finds m and
// Σ_c z_c (in double); the second computes exp(z_c − m), one exp per class from exp_t (the
// vectorised polynomial for float32, std::exp for float64), and s in double. Summing z_c − m
// there instead would keep Σ_c log p_c exact for any |m|, at 5 % of the kernel's time.
template <class T>
double cross_entropy_row(const T* z, T* p, std::int64_t C, std::int64_t t, double eps) {
  T m = z[0];
  double sum_z = 0;
#pragma omp simd reduction(max : m) reduction(+ : sum_z)
  for (std::int64_t c = 0; c < C; ++c) {
    m = std::max(m, z[c]);
    sum_z += static_cast<double>(z[c]);
  }
  double s = 0;
  if (p) {
#pragma omp simd reduction(+ : s)
    for (std::int64_t c = 0; c < C; ++c) {
      p[c] = exp_t(z[c] - m);
      s += static_cast<double>(p[c]);
    }
    const T inv = static_cast<T>(1.0 / s);
#pragma omp simd
    for (std::int64_t c = 0; c < C; ++c) p[c] *= inv;
  } else {
#pragma omp simd reduction(+ : s)
    for (std::int64_t c = 0; c < C; ++c) s += static_cast<double>(exp_t(z[c] - m));
  }
  const double md = static_cast<double>(m), log_s = std::log(s);
  const double logp_t = (static_cast<double>(z[t]) - md) - log_s;
  if (eps == 0.0) return -logp_t;
  const double sum_logp = (sum_z - static_cast<double>(C) * md) - static_cast<double>(C) * log_s;
  return -(1.0 - eps) * logp_t - eps / static_cast<double>(C) * sum_logp;
}

// dz = (p − q) · scale for one counted row, q = (1 − ε) onehot(t) + ε / C.
template <class T>
void cross_entropy_row_backward(T* dz, const T* p, std::int64_t C, std::int64_t t, double eps,
                                double scale) {
  const double uniform = eps / static_cast<double>(C);
  for (std::int64_t c = 0; c < C; ++c) {
    const double q = uniform + (c == t ? 1.0 - eps : 0.0);
    dz[c] = static_cast<T>((static_cast<double>(p[c]) - q) * scale);
  }
}

// dL/dz from the saved probabilities; g is dL/d(loss), a 0-dim tensor.
Tensor cross_entropy_backward(const CrossEntropySaved& saved, const Tensor& g) {
  const Shape& shape = saved.probs.shape();
  const std::int64_t N = shape[0], C = shape[1];
  // dz = (p − q)·scale row by row, into p itself when nothing reads p again (core/graph.h).
  const bool in_place = rule_runs_once() && g.dtype() == saved.probs.dtype();
  Tensor dz = in_place ? saved.probs : Tensor::zeros(shape, g.dtype());  // (N, C)
  const std::int64_t* t = saved.targets.data<std::int64_t>();
  const double n = static_cast<double>(std::max<std::int64_t>(saved.n_counted, 1));
  dispatch_float(g.dtype(), "cross_entropy backward", [&](auto tag) {
    using T = decltype(tag);
    const T* p = saved.probs.data<T>();  // (N, C)
    T* pdz = dz.data<T>();               // (N, C)
    const double scale = static_cast<double>(g.data<T>()[0]) / n;
    parallel_for(N, N * C > kParallelThreshold, [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t r = r0; r < r1; ++r)
        if (t[r] != saved.ignore_index)
          cross_entropy_row_backward(pdz + r * C, p + r * C, C, t[r], saved.label_smoothing,
                                     scale);
        else if (in_place)
          std::fill(pdz + r * C, pdz + (r + 1) * C, T(0));  // an ignored row's gradient is 0
    });
  });
  return dz;
}

}  // namespace

// Forward, per counted row with p = softmax(z):
//   ℓ = −Σ_c q_c log p_c,  L = (1 / n_counted) Σ_rows ℓ.
// Backward: log p_c = z_c − log Σ_k exp(z_k), so ∂(log p_c)/∂z_j = δ_cj − p_j and
//   ∂ℓ/∂z_j = −Σ_c q_c (δ_cj − p_j) = p_j Σ_c q_c − q_j = p_j − q_j   (q sums to 1).
// Hence dz = dL · (p − q) / n_counted on counted rows and 0 on ignored ones. Backward needs only
// p, saved by the forward pass.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets,
                     const CrossEntropyOptions& options) {
  const std::int64_t n_counted = check_inputs(logits, targets, options, "cross_entropy");
  const std::int64_t N = logits.shape()[0], C = logits.shape()[1];
  CrossEntropySaved saved{Tensor(), targets, n_counted, options.ignore_index,
                          options.label_smoothing};
  if (needs_grad({&logits})) saved.probs = Tensor::empty(logits.shape(), logits.dtype());

  Tensor loss = Tensor::empty({}, logits.dtype());
  const std::int64_t* t = targets.data<std::int64_t>();
  dispatch_float(logits.dtype(), "cross_entropy", [&](auto tag) {
    using T = decltype(tag);
    const T* z = logits.data<T>();                                   // (N, C)
    T* p = saved.probs.defined() ? saved.probs.data<T>() : nullptr;  // (N, C) or none
    // Row losses in parallel, then summed in row order: the same loss on any thread count.
    std::vector<double> row_loss(static_cast<std::size_t>(N), 0.0);
    parallel_for(N, N * C > kParallelThreshold, [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t r = r0; r < r1; ++r)
        if (t[r] != options.ignore_index)
          row_loss[r] = cross_entropy_row(z + r * C, p ? p + r * C : nullptr, C, t[r],
                                          options.label_smoothing);
    });
    double total = 0;
    for (double l : row_loss) total += l;
    // No counted row: the loss is 0 (not 0/0), and so is its gradient.
    const double mean = n_counted > 0 ? total / static_cast<double>(n_counted) : 0.0;
    loss.data<T>()[0] = static_cast<T>(mean);
  });

  return record(loss, "cross_entropy", {logits, targets},
                [saved](const Tensor& g) -> std::vector<Tensor> {
                  return {cross_entropy_backward(saved, g), Tensor()};
                });
}

// The same loss from differentiable primitives, written the way the formula reads:
//   log p = log_softmax(z);  nll = −log p[t];  smooth = −mean_c log p;
//   ℓ = (1 − ε) nll + ε smooth;  L = Σ_rows w ℓ / n_counted,  w = [t ≠ ignore_index].
Tensor cross_entropy_composed(const Tensor& logits, const Tensor& targets,
                              const CrossEntropyOptions& options) {
  const std::int64_t n_counted = check_inputs(logits, targets, options, "cross_entropy_composed");
  const std::int64_t N = logits.shape()[0];
  // Ignored rows gather class 0 (any valid index would do) and are then weighted by 0.
  std::vector<std::int64_t> safe = targets.to_indices();
  std::vector<double> weight(static_cast<std::size_t>(N), 1.0);
  for (std::int64_t r = 0; r < N; ++r) {
    if (safe[r] == options.ignore_index) {
      safe[r] = 0;
      weight[r] = 0.0;
    }
  }
  Tensor t = Tensor::from_indices(safe, {N, 1});             // (N, 1)
  Tensor w = Tensor::from_vector(weight, {N}, logits.dtype());  // (N,)

  const double eps = options.label_smoothing;
  Tensor logp = log_softmax_composed(logits, 1);                // (N, C)
  Tensor nll = neg(squeeze(gather(logp, 1, t), 1));              // (N,)
  // Without smoothing the term is left out, not multiplied by 0: a −∞ logit makes it −∞.
  Tensor per_row = nll;                                          // (N,)
  if (eps > 0) {
    Tensor smooth = neg(mean(logp, {1}));                        // (N,)
    per_row = nll * (1.0 - eps) + smooth * eps;
  }
  Tensor total = sum(per_row * w);                               // ()
  return n_counted > 0 ? total / static_cast<double>(n_counted) : total * 0.0;
}

}  // namespace uwaga::nn
