#include "optim/data_parallel.h"

#include <omp.h>

#include <exception>

#include "core/elementwise.h"
#include "core/threads.h"

namespace uwaga::optim {

int resolve_threads(int threads) {
  if (threads < 0) fail("DataParallel: threads must be ≥ 0 (0: uwaga's thread count), got ", threads);
  init_threads();
  return threads == 0 ? num_threads() : threads;
}

std::vector<std::vector<RowRange>> deal_rows(std::int64_t rows, int threads,
                                             std::int64_t micro_batch) {
  if (rows < 1) fail("DataParallel: a batch needs at least one row, got ", rows);
  if (threads < 1) fail("DataParallel: threads must be ≥ 1, got ", threads);
  std::vector<std::vector<RowRange>> plan(threads);
  for (int t = 0; t < threads; ++t) {
    const std::int64_t begin = rows * t / threads, end = rows * (t + 1) / threads;
    const std::int64_t share = end - begin;
    if (share == 0) continue;
    const std::int64_t pieces =
        micro_batch > 0 ? (share + micro_batch - 1) / micro_batch : std::int64_t{1};
    for (std::int64_t p = 0; p < pieces; ++p)
      plan[t].push_back({begin + share * p / pieces, begin + share * (p + 1) / pieces});
  }
  return plan;
}

void run_on_threads(int threads, const std::function<void(int)>& work,
                    const std::function<void(int)>& then) {
  if (threads == 1) {
    work(0);
    if (then) then(0);
    return;
  }
  // An exception must not leave an OpenMP region: each thread keeps its own, the first is rethrown.
  std::vector<std::exception_ptr> errors(threads);
#pragma omp parallel num_threads(threads)
  {
    // The runtime may grant fewer threads (inside another parallel region it grants one): then a
    // thread takes several t in turn.
    const int first = omp_get_thread_num(), stride = omp_get_num_threads();
    auto each = [&](const std::function<void(int)>& fn) {
      for (int t = first; t < threads; t += stride) {
        try {
          fn(t);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      }
    };
    each(work);
    if (then) {
#pragma omp barrier
      bool failed = false;  // read after the barrier: every thread sees every work's outcome
      for (const std::exception_ptr& e : errors) failed = failed || e != nullptr;
      if (!failed) each(then);
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

std::vector<std::size_t> share_by_size(const std::vector<Tensor>& params, int threads) {
  if (threads < 1) fail("share_by_size: threads must be ≥ 1, got ", threads);
  std::int64_t total = 0;
  for (const Tensor& p : params) total += p.numel();
  // Thread t's run ends at the first parameter where the running total reaches (t + 1)/threads
  // of all elements.
  std::vector<std::size_t> shares(threads + 1, params.size());
  shares[0] = 0;
  std::int64_t seen = 0;
  std::size_t i = 0;
  for (int t = 1; t < threads; ++t) {
    const std::int64_t goal = total * t / threads;
    while (i < params.size() && seen + params[i].numel() / 2 < goal) seen += params[i++].numel();
    shares[t] = i;
  }
  return shares;
}

void add_gradient(Tensor& into, Tensor& from) {
  Tensor g = from.grad();
  if (!g.defined()) return;  // that replica had no rows, or the parameter took no part
  Tensor acc = into.grad();
  if (acc.defined()) add_inplace(acc, g);
  else into.set_grad(g);  // taken over: `from` lets go of it below
  from.zero_grad();
}

}  // namespace uwaga::optim
