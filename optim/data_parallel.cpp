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

void run_on_threads(int threads, const std::function<void(int)>& work) {
  if (threads == 1) {
    work(0);
    return;
  }
  // An exception must not leave an OpenMP region: each thread keeps its own, the first is rethrown.
  std::vector<std::exception_ptr> errors(threads);
#pragma omp parallel num_threads(threads)
  {
    // The runtime may grant fewer threads (inside another parallel region it grants one): then a
    // thread takes several replicas in turn.
    for (int t = omp_get_thread_num(); t < threads; t += omp_get_num_threads()) {
      try {
        work(t);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

void add_gradients(nn::Module& into, nn::Module& from) {
  const nn::NamedTensors to = into.named_parameters(), source = from.named_parameters();
  if (to.size() != source.size())
    fail("add_gradients: the modules have ", to.size(), " and ", source.size(), " parameters");
  for (std::size_t i = 0; i < to.size(); ++i) {
    Tensor p = to[i].second, q = source[i].second;
    Tensor g = q.grad();
    if (!g.defined()) continue;  // that replica had no rows, or the parameter took no part
    Tensor acc = p.grad();
    if (acc.defined()) add_inplace(acc, g);
    else p.set_grad(g);  // taken over: `from` lets go of it below
    q.zero_grad();
  }
}

}  // namespace uwaga::optim
