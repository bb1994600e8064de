#include "core/gradcheck.h"

#include <cmath>
#include <exception>
#include <sstream>
#include <string>

#include "core/graph.h"

namespace uwaga {
namespace {

double dot(const Tensor& a, const Tensor& b) {
  const double* pa = a.data<double>();
  const double* pb = b.data<double>();
  double acc = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) acc += pa[i] * pb[i];
  return acc;
}

std::string index_str(const Shape& shape, std::int64_t flat) {
  Shape idx(shape.size());
  for (std::int64_t d = static_cast<std::int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return shape_str(idx);
}

}  // namespace

GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options) {
  if (!(options.eps > 0) || !std::isfinite(options.eps))
    fail("gradcheck: eps must be positive and finite, got ", options.eps);
  if (!(options.atol >= 0 && options.rtol >= 0) || !std::isfinite(options.atol) ||
      !std::isfinite(options.rtol) || options.atol + options.rtol == 0)
    fail("gradcheck: atol and rtol must be finite, ≥ 0 and not both 0, got atol ", options.atol,
         ", rtol ", options.rtol);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    check_defined(x, "gradcheck");
    if (x.is_floating() && x.dtype() != DType::Float64)
      fail("gradcheck: input ", i, " ", shape_str(x.shape()), " has dtype ", dtype_name(x.dtype()),
           "; gradcheck needs float64 (float32 rounding would swamp eps = ", options.eps, ")");
    if (x.requires_grad() && !x.is_leaf())
      fail("gradcheck: input ", i, " is not a leaf; pass tensors made with requires_grad_()");
  }

  // Analytic: one backward pass with a random upstream gradient v gives vᵀJ for every input.
  for (const Tensor& x : inputs) const_cast<Tensor&>(x).zero_grad();
  Tensor y = f(inputs);
  check_defined(y, "gradcheck");
  if (y.dtype() != DType::Float64)
    fail("gradcheck: the function returned dtype ", dtype_name(y.dtype()), ", expected float64");
  Generator gen(options.seed);
  Tensor v = Tensor::randn(y.shape(), gen, DType::Float64);
  GradcheckResult result;
  // A backward pass that fails (a rule returning a gradient of the wrong shape, a Python
  // Function's backward raising) is a gradient that is wrong: reported, as a mismatch is.
  try {
    if (y.requires_grad()) y.backward(v);
  } catch (const std::exception& e) {
    result.ok = false;
    result.message = std::string("gradcheck: the backward pass failed: ") + e.what();
    return result;
  }

  result.ok = true;
  bool any_analytic = false, any_numeric = false;
  double worst_ratio = -1;
  std::ostringstream worst;
  NoGradGuard no_grad;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Tensor x = inputs[i];
    if (!x.requires_grad()) continue;
    Tensor analytic = x.grad().defined() ? x.grad() : Tensor::zeros(x.shape(), DType::Float64);
    double* px = x.data<double>();
    for (std::int64_t j = 0; j < x.numel(); ++j) {
      // Numeric: central difference of ⟨v, f(x)⟩ along element j.
      const double saved = px[j];
      px[j] = saved + options.eps;
      const double plus = dot(f(inputs), v);
      px[j] = saved - options.eps;
      const double minus = dot(f(inputs), v);
      px[j] = saved;
      const double numeric = (plus - minus) / (2 * options.eps);
      const double a = analytic.data<double>()[j];
      any_analytic |= a != 0;
      any_numeric |= std::abs(numeric) > options.atol;
      const double err = std::abs(a - numeric);
      const double allowed = options.atol + options.rtol * std::abs(numeric);
      // A NaN or infinite gradient fails outright (NaN compares false with every bound).
      const bool finite = std::isfinite(a) && std::isfinite(numeric);
      const double ratio = !finite ? INFINITY : err == 0 ? 0 : err / allowed;
      result.max_abs_error = finite ? std::max(result.max_abs_error, err) : INFINITY;
      result.checked++;
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        worst.str("");
        worst << "input " << i << " " << shape_str(x.shape()) << ", element "
              << index_str(x.shape(), j) << ": analytic " << a << ", numeric " << numeric
              << ", |difference| " << err << " (allowed " << allowed << ", relative error "
              << err / std::max(std::abs(numeric), 1e-300) << ")";
      }
    }
  }
  std::ostringstream msg;
  if (!any_analytic && any_numeric) {
    result.ok = false;
    msg << "gradcheck: every analytic gradient is zero but the numeric ones are not (is the "
           "graph connected?); worst at "
        << worst.str();
  } else if (worst_ratio > 1) {
    result.ok = false;
    msg << "gradcheck: gradients differ; worst at " << worst.str();
  } else if (!any_analytic && !any_numeric && !options.allow_all_zero) {
    result.ok = false;
    msg << "gradcheck: analytic and numeric gradients are both zero everywhere, so the check "
           "proves nothing (set allow_all_zero if that is expected)";
  } else if (result.checked == 0) {
    result.ok = false;
    msg << "gradcheck: no input requires grad";
  } else {
    msg << "gradcheck: ok, " << result.checked << " elements; worst at " << worst.str();
  }
  result.message = msg.str();
  return result;
}

}  // namespace uwaga
