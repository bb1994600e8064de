#pragma once
// Test helpers around core/gradcheck.h.
#include <catch2/catch.hpp>

#include "core/uwaga.h"

namespace uwaga::testing {

// A float64 leaf with standard-normal values, requiring grad.
inline Tensor leaf(const Shape& shape, std::uint64_t seed) {
  Generator gen(seed);
  return Tensor::randn(shape, gen, DType::Float64).requires_grad_();
}

// A float64 leaf with values in [low, high) (for log, sqrt, div, ...).
inline Tensor positive_leaf(const Shape& shape, std::uint64_t seed, double low = 0.5,
                            double high = 2.0) {
  Generator gen(seed);
  return Tensor::uniform(shape, gen, low, high, DType::Float64).requires_grad_();
}

inline void require_gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                              GradcheckOptions options = {}) {
  GradcheckResult r = gradcheck(f, inputs, options);
  INFO(r.message);
  REQUIRE(r.ok);
  REQUIRE(r.checked > 0);
}

// The inputs followed by every parameter of a module, for gradcheck of a whole module.
template <class M>
std::vector<Tensor> with_params(std::vector<Tensor> inputs, const M& module) {
  for (auto& p : module.parameters()) inputs.push_back(p);
  return inputs;
}

inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double m = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(a.flat(i) - b.flat(i)));
  return m;
}

}  // namespace uwaga::testing
