#include "apps/bench/bench_timing.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/blas_kernels.h"
#include "core/op_timer.h"
#include "core/threads.h"

namespace uwaga::apps {

using nlohmann::json;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

long peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // kilobytes on Linux
}

json header(const char* mode) {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  std::string wait = policy ? policy : spin ? std::string("GOMP_SPINCOUNT=") + spin : "unset";
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  return {{"impl", "uwaga"},
          {"mode", mode},
          {"threads", num_threads()},
          {"omp_wait_policy", wait},
          {"blas_core", blas_core()},  // the kernels the products ran on (core/blas_kernels.h)
          {"blas_core_at_load", blas_core_at_load()},
          {"openblas_coretype", coretype ? coretype : "unset"},
          {"blas_config", blas_config()}};
}

std::vector<double> time_calls(const std::function<void()>& fn, const BenchOptions& o,
                               int* calls_per_repeat, std::vector<double>* cpu_per_call) {
  for (int i = 0; i < o.warmup; ++i) fn();
  int calls = o.steps;
  if (calls <= 0) {
    const auto start = Clock::now();
    fn();
    const double one = std::max(seconds_since(start), 1e-7);
    calls = std::max(1, static_cast<int>(std::ceil(o.min_seconds / one)));
  }
  std::vector<double> per_call;
  for (int r = 0; r < o.repeats; ++r) {
    const double cpu_start = process_cpu_seconds();
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) fn();
    per_call.push_back(seconds_since(start) / calls);
    if (cpu_per_call) cpu_per_call->push_back((process_cpu_seconds() - cpu_start) / calls);
  }
  if (calls_per_repeat) *calls_per_repeat = calls;
  return per_call;
}

json time_ops(const std::function<void()>& train_step, int steps) {
  OpTimer timer;
  for (int s = 0; s < steps; ++s) train_step();
  json ops = json::object();
  double forward_ms = 0, backward_ms = 0;
  for (const OpTimes& t : timer.table()) {
    json row = {{"forward_ms", t.forward_s / steps * 1e3},
                {"backward_ms", t.backward_s / steps * 1e3},
                {"calls", t.calls / steps}};
    if (t.forward_flops > 0 && t.forward_s > 0) {
      row["forward_gflops"] = t.forward_flops / t.forward_s / 1e9;
      if (t.backward_s > 0) row["backward_gflops"] = 2 * t.forward_flops / t.backward_s / 1e9;
    } else if (t.forward_s > 0) {
      row["forward_gbps"] = t.forward_bytes / t.forward_s / 1e9;
    }
    ops[t.op] = row;
    forward_ms += t.forward_s / steps * 1e3;
    backward_ms += t.backward_s / steps * 1e3;
  }
  return {{"ops", ops}, {"forward_ms", forward_ms}, {"backward_ms", backward_ms}};
}

}  // namespace uwaga::apps
