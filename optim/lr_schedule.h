#pragma once
// Learning-rate schedules: the learning rate as a function of the optimizer step (0-based).
#include <cstdint>
#include <string>

namespace uwaga::optim {

class LrSchedule {
 public:
  virtual ~LrSchedule() = default;
  virtual double lr(std::int64_t step) const = 0;
  virtual std::string describe() const = 0;  // one line, for run summaries
};

class ConstantLr : public LrSchedule {
 public:
  explicit ConstantLr(double base);
  double lr(std::int64_t step) const override;
  std::string describe() const override;

 private:
  double base_;
};

// lr = base · gamma^⌊step / step_size⌋
class StepLr : public LrSchedule {
 public:
  StepLr(double base, std::int64_t step_size, double gamma);
  double lr(std::int64_t step) const override;
  std::string describe() const override;

 private:
  double base_;
  std::int64_t step_size_;
  double gamma_;
};

// Linear warm-up (base/warmup at step 0, base at step warmup − 1), then cosine decay to a floor:
//   lr(t) = base · (t + 1) / warmup                                            for t < warmup
//   lr(t) = floor + (base − floor) · ½ (1 + cos(π (t − warmup) / (total − warmup)))   after
// (and floor once t ≥ total).
class WarmupCosineLr : public LrSchedule {
 public:
  WarmupCosineLr(double base, std::int64_t warmup, std::int64_t total, double floor);
  double lr(std::int64_t step) const override;
  std::string describe() const override;
  std::int64_t warmup() const { return warmup_; }

 private:
  double base_;
  std::int64_t warmup_, total_;
  double floor_;
};

}  // namespace uwaga::optim
