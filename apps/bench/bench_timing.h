#pragma once
// What every uwaga-bench mode shares: its options, the timing loop, the JSON header of a line,
// and the process's CPU time and peak RSS.
#include <chrono>
#include <cstdint>
#include <string>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

namespace uwaga::apps {

using Clock = std::chrono::steady_clock;

struct BenchOptions {
  int threads = 1;
  std::int64_t batch = 128;
  int warmup = 3;
  int repeats = 5;
  int steps = 0;              // calls per repeat; 0: as many as fill min_seconds
  double min_seconds = 0.25;  // length of one repeat when steps is 0
  bool op_times = false;      // train, gpt: also every op's forward and backward time
  int op_steps = 20;          // … over this many more steps
  std::int64_t micro_batch = 16;  // train: images per forward/backward pass (0: a thread's share)
  std::uint64_t seed = 0;
  std::string model = "mnist-tiny";  // train, eval: a ViT; gpt, gpt-config: a uwaga-gpt preset
};

double seconds_since(Clock::time_point start);
double median(std::vector<double> v);
// CPU time of the whole process (all threads): unlike the wall clock it does not count the time
// other programs hold the cores, so it shows how much a shared machine slowed a measurement down.
double process_cpu_seconds();
long peak_rss_kb();

// What every line starts with: who measured what, on how many threads, under which wait policy.
nlohmann::json header(const char* mode);

// Seconds per call of `fn`, one entry per repeat: `warmup` calls first, then `repeats` repeats
// of `steps` calls (calibrated from one call when steps is 0). `cpu_per_call` gets the process's
// CPU seconds per call of each repeat.
std::vector<double> time_calls(const std::function<void()>& fn, const BenchOptions& o,
                               int* calls_per_repeat = nullptr,
                               std::vector<double>* cpu_per_call = nullptr);

// `steps` more calls of a training step with every op's forward and backward timed (core/op_timer.h),
// per step: {"ops": {op: {forward_ms, backward_ms, calls, forward_gflops and backward_gflops for
// the products, forward_gbps for the rest}}, "forward_ms", "backward_ms"} (apps/bench/op_table.py
// prints it as a table).
nlohmann::json time_ops(const std::function<void()>& train_step, int steps);

}  // namespace uwaga::apps
