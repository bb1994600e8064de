#include "optim/data_parallel.h"

#include <omp.h>

#include <exception>

#include "core/autograd.h"
#include "core/elementwise.h"
#include "core/shape_ops.h"
#include "core/threads.h"

namespace uwaga::optim {

namespace {

int resolve_threads(int threads) {
  if (threads < 0) fail("DataParallel: threads must be ≥ 0 (0: uwaga's thread count), got ", threads);
  init_threads();
  return threads == 0 ? num_threads() : threads;
}

std::vector<Tensor> parameters_of(const nn::Module& m) {
  std::vector<Tensor> out;
  for (auto& [name, p] : m.named_parameters()) out.push_back(p);
  return out;
}

}  // namespace

std::vector<std::vector<RowRange>> deal_rows(std::int64_t rows, int workers,
                                             std::int64_t micro_batch) {
  if (rows < 1) fail("DataParallel: a batch needs at least one row, got ", rows);
  if (workers < 1) fail("DataParallel: threads must be ≥ 1, got ", workers);
  std::vector<std::vector<RowRange>> plan(workers);
  for (int t = 0; t < workers; ++t) {
    const std::int64_t begin = rows * t / workers, end = rows * (t + 1) / workers;
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

DataParallel::DataParallel(nn::Model& model, DataParallelOptions options,
                           GradientReduction* reduction)
    : model_(model), options_(options), reduction_(reduction ? reduction : &single_process_) {
  if (options_.micro_batch < 0)
    fail("DataParallel: micro_batch must be ≥ 0 (0: no limit), got ", options_.micro_batch);
  const int threads = resolve_threads(options_.threads);
  for (int t = 1; t < threads; ++t) {
    std::shared_ptr<nn::Model> replica = model_.replica();
    replica->alias_parameters(model_);
    replica->alias_buffers(model_);  // read-only: the model alone updates running statistics
    replicas_.push_back(std::move(replica));
  }
  params_ = parameters_of(model_);
  for (auto& replica : replicas_) replica_params_.push_back(parameters_of(*replica));
  shares_ = share_by_size(params_, threads);
}

StepResult DataParallel::gradient(const Batch& batch, const nn::Loss& loss,
                                  std::uint64_t dropout_seed) {
  // This process trains workers [rank·T, (rank + 1)·T) of the size·T that share the batch.
  const int T = threads(), first_worker = reduction_->rank() * T;
  const std::vector<std::vector<RowRange>> all_workers =
      deal_rows(batch.rows(), reduction_->size() * T, options_.micro_batch);
  const std::vector<std::vector<RowRange>> plan(all_workers.begin() + first_worker,
                                                all_workers.begin() + first_worker + T);
  const std::int64_t counted = loss.count(batch.targets);  // n: the whole batch's
  if (counted < 1) fail("DataParallel: the batch has no target the loss counts (all padding?)");
  for (auto& replica : replicas_) replica->train(model_.is_training());

  std::vector<double> loss_sum(T, 0.0);
  std::vector<std::int64_t> items(T, 0), correct(T, 0);
  auto compute = [&](int t) {
    nn::Model& model = t == 0 ? model_ : *replicas_[t - 1];
    for (const RowRange& range : plan[t]) {
      const Batch part = batch.rows(range.begin, range.end);
      model.seed_dropout(dropout_seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(range.begin + 1));
      forward_begins();  // for a profiler timing the ops (core/op_timer.h)
      const Tensor output = model.forward_batch(part.inputs);
      const Tensor L_c = loss(output, part.targets);
      if (!L_c.defined() || L_c.numel() != 1)
        fail("DataParallel: the loss must have one element, got ",
             L_c.defined() ? shape_str(L_c.shape()) : std::string("an undefined tensor"));
      const std::int64_t n_c = loss.count(part.targets);
      const double weight = static_cast<double>(n_c) / static_cast<double>(counted);  // n_c/n
      loss_sum[t] += weight * L_c.item();
      items[t] += loss.items(part.targets);
      if (correct[t] >= 0) {
        NoGradGuard no_grad;
        const std::int64_t right = loss.correct(output, part.targets);
        correct[t] = right < 0 ? -1 : correct[t] + right;
      }
      // ∂L/∂L_c = n_c/n: the seed of this micro-batch's backward pass.
      L_c.backward(Tensor::full(L_c.shape(), weight, L_c.dtype()));
    }
  };
  // ∇L = Σ_t (replica t's gradients), summed into the model's: each thread adds up its own share
  // of the parameters, right after the last replica has finished (no serial pass, no second
  // parallel region).
  auto sum_replicas = [&](int t) {
    for (std::size_t i = shares_[t]; i < shares_[t + 1]; ++i)
      for (auto& replica : replica_params_) add_gradient(params_[i], replica[i]);
  };
  run_on_threads(T, compute, sum_replicas);

  std::vector<double> sums = {0.0, 0.0, 0.0};  // loss, items, correct (−1: not counted)
  for (int t = 0; t < T; ++t) {
    sums[0] += loss_sum[t];
    sums[1] += static_cast<double>(items[t]);
    sums[2] = sums[2] < 0 || correct[t] < 0 ? -1.0 : sums[2] + static_cast<double>(correct[t]);
  }
  reduction_->all_reduce(params_, sums);  // and across processes
  return {sums[0], static_cast<std::int64_t>(sums[1]), static_cast<std::int64_t>(sums[2])};
}

Tensor DataParallel::forward(const std::vector<Tensor>& inputs) {
  auto shape_of = [](const Tensor& x) {
    return x.defined() ? shape_str(x.shape()) : std::string("(undefined)");
  };
  if (inputs.empty()) fail("DataParallel::forward: no inputs");
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined() || inputs[i].dim() == 0 || inputs[i].size(0) != inputs[0].size(0))
      fail("DataParallel::forward: input ", i, " has shape ", shape_of(inputs[i]),
           "; every input needs the rows of input 0, ", shape_of(inputs[0]));
  const int T = threads();
  const std::vector<std::vector<RowRange>> plan =
      deal_rows(inputs[0].size(0), T, options_.micro_batch);
  for (auto& replica : replicas_) replica->train(model_.is_training());
  std::vector<std::vector<Tensor>> outputs(T);
  run_on_threads(T, [&](int t) {
    NoGradGuard no_grad;  // on this thread
    nn::Model& model = t == 0 ? model_ : *replicas_[t - 1];
    for (const RowRange& range : plan[t]) {
      std::vector<Tensor> part;
      for (const Tensor& x : inputs) part.push_back(slice(x, 0, range.begin, range.end));
      outputs[t].push_back(model.forward_batch(part));
    }
  });
  std::vector<Tensor> in_order;
  for (auto& pieces : outputs)
    for (Tensor& piece : pieces) in_order.push_back(std::move(piece));
  if (in_order.size() == 1) return in_order[0];
  NoGradGuard no_grad;
  return cat(in_order, 0);
}

}  // namespace uwaga::optim
