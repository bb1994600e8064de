#include "nn/drop_path.h"

#include <vector>

#include "core/graph.h"

namespace uwaga::nn {

// Forward:  y_b = x_b · m_b, one draw per row b (in row order, so the thread count never matters).
// Backward: y is linear in x with the mask fixed, so dx_b = dy_b · m_b.
Tensor drop_path(const Tensor& x, double p, bool training, Generator& gen) {
  check_float(x, "drop_path");
  if (!(p >= 0.0 && p < 1.0))
    fail("drop_path: p must be in [0, 1), got ", p, " (p = 1 would drop every path)");
  if (!training || p == 0.0) return x;
  if (x.dim() < 1) fail("drop_path: x must have a batch dimension, got a scalar");
  const std::int64_t B = x.size(0), row = B > 0 ? x.numel() / B : 0;
  std::vector<double> mask(static_cast<std::size_t>(B));
  for (auto& m : mask) m = gen.uniform() < p ? 0.0 : 1.0 / (1.0 - p);
  auto apply = [mask, B, row](const Tensor& in) {
    Tensor out = Tensor::empty_like(in);
    dispatch_float(in.dtype(), "drop_path", [&](auto tag) {
      using T = decltype(tag);
      const T* a = in.data<T>();
      T* y = out.data<T>();
      for (std::int64_t b = 0; b < B; ++b) {
        const T m = static_cast<T>(mask[static_cast<std::size_t>(b)]);
        for (std::int64_t i = b * row; i < (b + 1) * row; ++i) y[i] = a[i] * m;
      }
    });
    return out;
  };
  return record(apply(x), "drop_path", {x},
                [apply](const Tensor& g) -> std::vector<Tensor> { return {apply(g)}; });
}

Tensor DropPath::forward(const Tensor& x) { return drop_path(x, p(), is_training(), generator()); }

}  // namespace uwaga::nn
