#pragma once
// Progress: what a training run shows on the terminal — a live bar on a tty, plain log lines
// when stderr is a pipe or a file (CI), epoch summaries on stdout.
#include <chrono>
#include <cstdint>
#include <string>

#include "optim/meter.h"

namespace uwaga::optim {

// "nan", "inf", "-inf" or %g (printf may write "-nan").
std::string format_value(double x);
// printf-style formatting of one number, e.g. format("%.4f", loss).
std::string format(const char* fmt, double x);
// 4.2s, 42s, 3m05s, 2h10m; "?" for a negative or non-finite duration.
std::string format_duration(double seconds);

// Where a run is, for its status line. Epochs, batches and steps count from 1.
struct RunPosition {
  std::int64_t epoch = 0, epochs = 0;      // the epoch under way, of how many
  std::int64_t batch = 0, batches = 0;     // batches done in it, of how many
  std::int64_t step = 0, planned = 0;      // steps done, of how many this run will take
  double lr = 0;
  double eta_seconds = -1;                 // < 0: not known yet
};

// "epoch 2/15 [###.......] 140/468 step 608/7020 loss 0.4123 acc 0.8712 lr 9.87e-04 ETA 1m02s
// 7412 items/s |g| 0.512": the most useful fields first, as a bar cut to the terminal's width
// loses the rest. Without the bar the fields are separated by two spaces (log lines).
std::string status_line(const RunPosition& at, const Meter& m, bool with_bar);

class Progress {
 public:
  explicit Progress(bool quiet);
  bool tty() const { return tty_; }

  void bar(const std::string& line, bool force);  // redrawn in place, ≤ 10 times a second
  void line(const std::string& text);     // a log line on stderr (pipes, CI)
  void result(const std::string& text);   // an epoch summary on stdout
  void message(const std::string& text);  // always shown, even when quiet: why a run stopped
  void clear();                           // erases the bar

 private:
  bool quiet_, tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace uwaga::optim
