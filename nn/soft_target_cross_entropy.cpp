#include "nn/soft_target_cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/elementwise.h"
#include "core/graph.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "nn/softmax.h"

namespace uwaga::nn {
namespace {

void check_inputs(const Tensor& logits, const Tensor& targets, double eps, const char* op) {
  check_float(logits, op);
  check_float(targets, op);
  if (logits.dim() != 2 || logits.size(0) == 0 || logits.size(1) == 0)
    fail(op, ": logits must be 2-D (N, C) with N, C >= 1, got shape ", shape_str(logits.shape()));
  if (targets.shape() != logits.shape())
    fail(op, ": targets of shape ", shape_str(targets.shape()), " do not match logits of shape ",
         shape_str(logits.shape()), ": expected one probability per logit");
  check_same_dtype(logits, targets, op);
  if (!(eps >= 0.0 && eps <= 1.0))
    fail(op, ": label_smoothing must be in [0, 1], got ", eps);
}

}  // namespace

// Forward, per row with log p = z − m − log Σ_c exp(z_c − m) (m = max_c z_c, so nothing
// overflows) and q' = (1 − ε) q + ε / C:
//   ℓ = −Σ_c q'_c log p_c,  L = (1/N) Σ_rows ℓ.
// Backward: ∂ log p_c / ∂z_j = δ_cj − p_j, so ∂ℓ/∂z_j = −q'_j + p_j Σ_c q'_c; the targets' rows sum
// to s (1 for probabilities; not assumed), hence dz = dL (s' p − q') / N with s' = Σ_c q'_c.
// And ∂ℓ/∂q_j = −(1 − ε) log p_j: dq = −dL (1 − ε) log p / N.
Tensor soft_target_cross_entropy(const Tensor& logits, const Tensor& targets, double eps) {
  check_inputs(logits, targets, eps, "soft_target_cross_entropy");
  const std::int64_t N = logits.size(0), C = logits.size(1);
  Tensor logp = Tensor::empty(logits.shape(), logits.dtype());  // (N, C) log softmax(z)
  Tensor loss = Tensor::empty({}, logits.dtype());
  dispatch_float(logits.dtype(), "soft_target_cross_entropy", [&](auto tag) {
    using T = decltype(tag);
    const T* z = logits.data<T>();
    const T* q = targets.data<T>();
    T* lp = logp.data<T>();
    double total = 0;
    for (std::int64_t r = 0; r < N; ++r) {
      const T* zr = z + r * C;
      const double m = static_cast<double>(*std::max_element(zr, zr + C));
      double s = 0;
      for (std::int64_t c = 0; c < C; ++c) s += std::exp(static_cast<double>(zr[c]) - m);
      const double log_s = std::log(s);
      double row = 0;
      for (std::int64_t c = 0; c < C; ++c) {
        const double l = (static_cast<double>(zr[c]) - m) - log_s;
        lp[r * C + c] = static_cast<T>(l);
        const double qc = (1.0 - eps) * static_cast<double>(q[r * C + c]) + eps / C;
        if (qc != 0.0) row -= qc * l;  // 0 · (−∞) counts as 0: a class the target never names
      }
      total += row;
    }
    loss.data<T>()[0] = static_cast<T>(total / static_cast<double>(N));
  });
  return record(loss, "soft_target_cross_entropy", {logits, targets},
                [logp, targets, eps](const Tensor& g) -> std::vector<Tensor> {
    const std::int64_t N = logp.size(0), C = logp.size(1);
    Tensor dz = Tensor::empty(logp.shape(), g.dtype());
    Tensor dq = Tensor::empty(logp.shape(), g.dtype());
    dispatch_float(g.dtype(), "soft_target_cross_entropy backward", [&](auto tag) {
      using T = decltype(tag);
      const double scale = static_cast<double>(g.data<T>()[0]) / static_cast<double>(N);
      const T* lp = logp.data<T>();
      const T* q = targets.data<T>();
      T* pdz = dz.data<T>();
      T* pdq = dq.data<T>();
      for (std::int64_t r = 0; r < N; ++r) {
        double s = 0;
        for (std::int64_t c = 0; c < C; ++c)
          s += (1.0 - eps) * static_cast<double>(q[r * C + c]) + eps / C;
        for (std::int64_t c = 0; c < C; ++c) {
          const double l = static_cast<double>(lp[r * C + c]);
          const double qc = (1.0 - eps) * static_cast<double>(q[r * C + c]) + eps / C;
          pdz[r * C + c] = static_cast<T>((s * std::exp(l) - qc) * scale);
          pdq[r * C + c] = static_cast<T>(-(1.0 - eps) * l * scale);
        }
      }
    });
    return {dz, dq};
  });
}

// ℓ = −Σ_c q'_c log_softmax(z)_c, averaged over rows, from differentiable primitives.
Tensor soft_target_cross_entropy_composed(const Tensor& logits, const Tensor& targets,
                                          double eps) {
  check_inputs(logits, targets, eps, "soft_target_cross_entropy_composed");
  const double C = static_cast<double>(logits.size(1));
  Tensor q = eps > 0 ? targets * (1.0 - eps) + eps / C : targets;
  Tensor per_row = neg(sum(q * log_softmax_composed(logits, 1), {1}));  // (N,)
  return mean(per_row);
}

}  // namespace uwaga::nn
