#pragma once
// gradcheck: compares autograd's gradients with central finite differences, in float64.
//
// For a function f of several inputs, it draws a random upstream gradient v (the shape of f's
// output) and checks d⟨v, f(x)⟩/dx element by element:
//   numeric  = (⟨v, f(x + eps·e_i)⟩ − ⟨v, f(x − eps·e_i)⟩) / (2 eps)
//   analytic = (autograd's vector–Jacobian product)_i
//   ok when |analytic − numeric| ≤ atol + rtol·|numeric|
// It also fails when every analytic gradient is zero while some numeric one is not, and (unless
// allowed) when both are zero everywhere, since a check that compares zeros with zeros proves
// nothing; and when the backward pass itself fails (an op's rule returning a gradient of the wrong
// shape), with the error as its message. Why float64: with eps = 1e-6 the rounding error of float32 (~1e-7 relative) divided
// by 2·eps would swamp the difference being measured.
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace uwaga {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  std::uint64_t seed = 0;       // for the random upstream gradient
  bool allow_all_zero = false;  // set for functions whose gradient is truly zero everywhere
};

struct GradcheckResult {
  bool ok = false;
  std::string message;  // on failure: the input, the worst element, both values, the error
  double max_abs_error = 0;
  std::int64_t checked = 0;  // number of elements compared
};

using GradcheckFn = std::function<Tensor(const std::vector<Tensor>&)>;

// Inputs must be float64; those with requires_grad() are checked.
GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

}  // namespace uwaga
