#include "apps/common/processes.h"

#include <cstdio>

#include "core/error.h"
#ifdef UWAGA_MPI
#include "optim/mpi_reduction.h"
#endif

namespace uwaga::apps {
namespace {

// The first key path at which `a` and `b` differ ("/model/dim"), or "" when they are equal.
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b,
                             const std::string& at = "") {
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key())) return at + "/" + it.key();
      if (std::string d = first_difference(it.value(), b.at(it.key()), at + "/" + it.key()); !d.empty())
        return d;
    }
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key())) return at + "/" + it.key();
    return "";
  }
  return a == b ? "" : (at.empty() ? "/" : at);
}

}  // namespace

void on_every_process(optim::GradientReduction& processes, const std::function<void()>& setup) {
  std::string error;
  try {
    setup();
  } catch (const Error& e) {
    if (processes.size() == 1) throw;
    error = e.what();
  }
  if (std::string first = processes.first_error(error); !first.empty()) fail(first);
}

void check_same_settings(optim::GradientReduction& processes, const nlohmann::json& settings) {
  if (processes.size() == 1) return;
  std::string text = settings.dump();
  processes.broadcast(text);  // process 0's
  const nlohmann::json theirs = nlohmann::json::parse(text);
  std::string error;
  if (const std::string path = first_difference(settings, theirs); !path.empty()) {
    const nlohmann::json::json_pointer at(path);
    auto shown = [&](const nlohmann::json& j) {
      const std::string s = j.contains(at) ? j.at(at).dump() : std::string("(none)");
      return s.size() > 60 ? s.substr(0, 57) + "..." : s;
    };
    std::string name = path.substr(1);
    for (char& c : name) c = c == '/' ? '.' : c;
    error = "the setting " + name + " is " + shown(settings) + " here but " + shown(theirs) +
            " in process 0: every process must run the same command on the same data";
  }
  if (std::string first = processes.first_error(error); !first.empty()) fail(first);
}

nlohmann::json training_settings(const std::string& run_json, const optim::TrainerOptions& options,
                                 std::int64_t eval_items) {
  return {{"run", nlohmann::json::parse(run_json)},
          {"threads", options.parallel.threads},
          {"micro_batch", options.parallel.micro_batch},
          {"max_steps", options.max_steps},
          {"resume", options.resume},
          {"log_every", options.log_every},
          {"eval_every", options.eval_every},
          {"save_every", options.save_every},
          {"evaluation_items", eval_items}};
}

std::string communication_summary([[maybe_unused]] optim::GradientReduction& processes,
                                  [[maybe_unused]] std::int64_t steps,
                                  [[maybe_unused]] double seconds) {
#ifdef UWAGA_MPI
  if (auto* mpi = dynamic_cast<optim::MpiReduction*>(&processes); mpi && mpi->size() > 1 &&
                                                                  mpi->reduce_calls() > 0) {
    const double per_step = mpi->reduce_seconds() / static_cast<double>(mpi->reduce_calls());
    const double bytes = static_cast<double>(mpi->reduce_bytes()) / static_cast<double>(mpi->reduce_calls());
    char line[200];
    std::snprintf(line, sizeof line,
                  "%s: all-reduce %.3f ms a step (%.2f MB of gradients), %.1f %% of the run's "
                  "%.1f s",
                  mpi->name().c_str(), per_step * 1e3, bytes / 1e6,
                  seconds > 0 ? 100.0 * mpi->reduce_seconds() / seconds : 0.0, seconds);
    (void)steps;
    return line;
  }
#endif
  return "";
}

}  // namespace uwaga::apps
