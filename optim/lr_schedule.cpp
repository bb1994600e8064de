#include "optim/lr_schedule.h"

#include <cmath>
#include <numbers>
#include <sstream>

#include "core/error.h"

namespace uwaga::optim {

static void check_rate(double value, const char* schedule, const char* what) {
  if (!(value >= 0) || !std::isfinite(value))
    fail(schedule, ": ", what, " must be a finite number >= 0, got ", value);
}

static void check_step(std::int64_t step, const char* schedule) {
  if (step < 0) fail(schedule, ": steps count from 0, got step ", step);
}

// ---- ConstantLr -----------------------------------------------------------------------------

ConstantLr::ConstantLr(double base) : base_(base) { check_rate(base, "ConstantLr", "base"); }

double ConstantLr::lr(std::int64_t step) const {
  check_step(step, "ConstantLr");
  return base_;
}

std::string ConstantLr::describe() const {
  std::ostringstream out;
  out << "constant lr " << base_;
  return out.str();
}

// ---- StepLr ---------------------------------------------------------------------------------

StepLr::StepLr(double base, std::int64_t step_size, double gamma)
    : base_(base), step_size_(step_size), gamma_(gamma) {
  check_rate(base, "StepLr", "base");
  if (step_size <= 0) fail("StepLr: step_size must be >= 1, got ", step_size);
  if (!(gamma > 0) || !std::isfinite(gamma))
    fail("StepLr: gamma must be a finite number > 0, got ", gamma);
}

double StepLr::lr(std::int64_t step) const {
  check_step(step, "StepLr");
  return base_ * std::pow(gamma_, static_cast<double>(step / step_size_));
}

std::string StepLr::describe() const {
  std::ostringstream out;
  out << "step lr " << base_ << ", times " << gamma_ << " every " << step_size_ << " steps";
  return out.str();
}

// ---- WarmupCosineLr -------------------------------------------------------------------------

WarmupCosineLr::WarmupCosineLr(double base, std::int64_t warmup, std::int64_t total, double floor)
    : base_(base), warmup_(warmup), total_(total), floor_(floor) {
  check_rate(base, "WarmupCosineLr", "base");
  check_rate(floor, "WarmupCosineLr", "floor");
  if (floor > base) fail("WarmupCosineLr: floor ", floor, " is above base ", base);
  if (warmup < 0) fail("WarmupCosineLr: warmup must be >= 0 steps, got ", warmup);
  if (total <= warmup)
    fail("WarmupCosineLr: total (", total, " steps) must be greater than warmup (", warmup,
         " steps)");
}

double WarmupCosineLr::lr(std::int64_t step) const {
  check_step(step, "WarmupCosineLr");
  const double t = static_cast<double>(step);
  // (t + 1): the first step already trains, at base / warmup, and step warmup − 1 reaches base.
  if (step < warmup_) return base_ * (t + 1) / static_cast<double>(warmup_);
  if (step >= total_) return floor_;
  const double progress = std::numbers::pi * (t - static_cast<double>(warmup_)) /
                          static_cast<double>(total_ - warmup_);  // 0 → π
  return floor_ + (base_ - floor_) * 0.5 * (1 + std::cos(progress));
}

std::string WarmupCosineLr::describe() const {
  std::ostringstream out;
  out << "warmup-cosine lr: linear warm-up to " << base_ << " over " << warmup_
      << " steps, cosine decay to " << floor_ << " at step " << total_;
  return out.str();
}

}  // namespace uwaga::optim
