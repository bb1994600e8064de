#include "apps/common/run_summary.h"

#include <cstdarg>
#include <cstdio>

#include "core/threads.h"

namespace uwaga::apps {

void RunSummary::heading(const std::string& preset, const std::string& more) const {
  std::printf("%s: %s%s\n", text_.program.c_str(), preset.empty() ? "custom" : preset.c_str(),
              more.c_str());
}

namespace {

// "optimiser", the longest label, sets the column.
void print_label(const char* label) { std::printf("  %-9s ", label); }

}  // namespace

void RunSummary::line(const char* label, const char* format, ...) const {
  print_label(label);
  std::va_list values;
  va_start(values, format);
  std::vprintf(format, values);
  va_end(values);
  std::printf("\n");
}

void RunSummary::print_optimiser(const OptimiserSettings& s) const {
  print_label("optimiser");
  std::printf("AdamW lr %g (warm-up %lld steps, cosine to %g)", s.lr, (long long)s.warmup,
              s.min_lr);
  if (s.beta2) std::printf(", beta2 %g", *s.beta2);
  std::printf(", weight decay %g, batch %lld %s, %lld epochs of %lld steps", s.weight_decay,
              (long long)s.batch_size, text_.examples.c_str(), (long long)s.epochs,
              (long long)s.steps_per_epoch);
  if (s.label_smoothing) std::printf(", label smoothing %g", *s.label_smoothing);
  std::printf(", clip %g, seed %llu\n", s.clip_norm, (unsigned long long)s.seed);
}

void RunSummary::threads(const optim::DataParallelOptions& parallel) const {
  const std::string at_once = parallel.micro_batch ? "at most " +
                                                         std::to_string(parallel.micro_batch) +
                                                         " " + text_.micro_batch_items +
                                                         " at a time"
                                                   : "all of it at once";
  if (parallel.threads == 1 && num_threads() > 1)
    line("threads", "%d, sharing each operation of one replica of the model (large enough to "
         "split), %s", num_threads(), at_once.c_str());
  else
    line("threads", "%d, each training a replica of the model on its share of a batch, %s",
         parallel.threads, at_once.c_str());
}

}  // namespace uwaga::apps
