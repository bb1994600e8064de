#pragma once
// DataParallel: the gradient of one training step computed on several threads at once, each
// thread running its own replica of the model on its share of the batch.
//
// A tiny model's ops are tiny. Splitting each matrix product, LayerNorm and softmax across the
// cores — what every op does on its own — makes the cores meet at a barrier a few hundred times
// a step, and spreads each op's working set over both caches. Data parallelism splits the batch
// instead. The loss is a mean over the B rows of the batch, so for any split into micro-batches c
// of B_c rows with mean losses L_c
//
//   L = (1/B) Σ_b ℓ_b = Σ_c (B_c/B) L_c          ∇L = Σ_c (B_c/B) ∇L_c
//
// Thread t runs replica t (thread 0 runs the model itself) over its micro-batches, starting the
// backward pass of each L_c from the seed gradient B_c/B instead of 1, so the replica's gradients
// accumulate its part of ∇L. At the end the replicas' gradients are added into the model's.
// Replicas alias the model's parameter storage (nn::Module::alias_parameters): the optimizer
// updates the model and every replica sees the new values; only the gradients are per replica.
//
// A loss that is a mean over something other than rows — a translation's loss is a mean over
// target words, and sentences have different lengths — splits the same way with B_c/B replaced by
// the micro-batch's share of those items: step() takes that share as weight_of(range).
//
// Micro-batches help on one thread too: `micro_batch` rows at a time keep a block's activations
// in the core's cache (gradient accumulation — the same ∇L, summed in another order).
//
// The split depends only on B, the thread count and micro_batch: a run is reproducible for a given
// thread count, and differs from a run on another thread count in the last bits (summation order).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "nn/module.h"
#include "optim/trainer.h"

namespace uwaga::optim {

struct DataParallelOptions {
  int threads = 0;               // replicas, one per thread; 0: uwaga::num_threads()
  std::int64_t micro_batch = 0;  // most rows per forward/backward; 0: a thread's whole share
};

// Rows [begin, end) of the batch.
struct RowRange {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
};

// The batch's rows dealt out: thread t gets a contiguous share of ⌊rows/threads⌋ or one more,
// cut into the fewest micro-batches of at most micro_batch rows (sizes differing by at most one).
std::vector<std::vector<RowRange>> deal_rows(std::int64_t rows, int threads,
                                             std::int64_t micro_batch);

// Runs work(t) for t = 0 … threads − 1, one thread each; then, once every work(t) has returned
// and none threw, then(t) for every t on the same threads (no new parallel region). Rethrows the
// first exception thrown.
void run_on_threads(int threads, const std::function<void(int)>& work,
                    const std::function<void(int)>& then = {});

// The parameters dealt out for the gradient reduction: thread t gets the contiguous run
// [shares[t], shares[t + 1]) of `params`, about an equal number of elements each.
std::vector<std::size_t> share_by_size(const std::vector<Tensor>& params, int threads);

// into.grad() += from.grad() (taking from's buffer over when into has none); from's is dropped.
void add_gradient(Tensor& into, Tensor& from);

template <class Model>
class DataParallel {
 public:
  // The mean loss of rows [begin, end) of the current batch computed by `model`, attached to the
  // graph, with the row count and (optionally) the correct predictions.
  using MicroBatchLoss = std::function<StepResult(Model& model, RowRange rows)>;

  // make_replica() builds a model of the same architecture and dtype; its own initial values are
  // never used. `model` must outlive this object.
  DataParallel(Model& model, const std::function<std::shared_ptr<Model>()>& make_replica,
               DataParallelOptions options = {});

  int threads() const { return static_cast<int>(replicas_.size()) + 1; }
  std::int64_t micro_batch() const { return options_.micro_batch; }

  // The share of the batch's loss that the mean loss of rows [begin, end) carries.
  using MicroBatchWeight = std::function<double(RowRange rows)>;

  // Forward and backward of a batch of `rows` rows. Afterwards the model's gradients are those of
  // the batch's mean loss (added to what they held before, as backward() does). Returns that loss
  // as a value (a float64 scalar, not attached to the graph), with items and correct summed.
  // weight_of: each micro-batch's share of the loss; by default its share of the rows, B_c/B.
  StepResult step(std::int64_t rows, const MicroBatchLoss& loss_of,
                  const MicroBatchWeight& weight_of = {});

 private:
  Model& model_;
  std::vector<std::shared_ptr<Model>> replicas_;  // thread t ≥ 1 runs replicas_[t − 1]
  DataParallelOptions options_;
  // The parameters of the model and of each replica, in the same order; thread t adds up the
  // gradients of parameters [shares_[t], shares_[t + 1]).
  std::vector<Tensor> params_;
  std::vector<std::vector<Tensor>> replica_params_;
  std::vector<std::size_t> shares_;
};

// ---- implementation -------------------------------------------------------------------------

int resolve_threads(int threads);  // 0 → uwaga::num_threads(); checks ≥ 1

template <class Model>
DataParallel<Model>::DataParallel(Model& model,
                                  const std::function<std::shared_ptr<Model>()>& make_replica,
                                  DataParallelOptions options)
    : model_(model), options_(options) {
  if (options_.micro_batch < 0)
    fail("DataParallel: micro_batch must be ≥ 0 (0: no limit), got ", options_.micro_batch);
  const int threads = resolve_threads(options_.threads);
  for (int t = 1; t < threads; ++t) {
    std::shared_ptr<Model> replica = make_replica();
    replica->alias_parameters(model_);
    replicas_.push_back(std::move(replica));
  }
  auto tensors = [](const nn::Module& m) {
    std::vector<Tensor> out;
    for (auto& [name, p] : m.named_parameters()) out.push_back(p);
    return out;
  };
  params_ = tensors(model_);
  for (auto& replica : replicas_) replica_params_.push_back(tensors(*replica));
  shares_ = share_by_size(params_, threads);
}

template <class Model>
StepResult DataParallel<Model>::step(std::int64_t rows, const MicroBatchLoss& loss_of,
                                     const MicroBatchWeight& weight_of) {
  const std::vector<std::vector<RowRange>> plan =
      deal_rows(rows, threads(), options_.micro_batch);
  for (auto& replica : replicas_) replica->train(model_.is_training());
  std::vector<double> loss(threads(), 0.0);
  std::vector<std::int64_t> items(threads(), 0), correct(threads(), 0);
  auto compute = [&](int t) {
    Model& model = t == 0 ? model_ : *replicas_[t - 1];
    for (const RowRange& range : plan[t]) {
      StepResult r = loss_of(model, range);
      if (!r.loss.defined() || r.loss.numel() != 1)
        fail("DataParallel: the micro-batch loss must have one element, got ",
             r.loss.defined() ? shape_str(r.loss.shape()) : std::string("an undefined tensor"));
      const double weight = weight_of ? weight_of(range)
                                      : static_cast<double>(range.size()) / static_cast<double>(rows);
      loss[t] += weight * r.loss.item();
      // ∂L/∂L_c = B_c/B (or the share weight_of gives): the seed of this micro-batch's backward.
      r.loss.backward(Tensor::full(r.loss.shape(), weight, r.loss.dtype()));
      items[t] += r.items;
      if (correct[t] >= 0) correct[t] = r.correct < 0 ? -1 : correct[t] + r.correct;
    }
  };
  // ∇L = Σ_t (replica t's gradients), summed into the model's: each thread adds up its own share
  // of the parameters, right after the last replica has finished (no serial pass, no second
  // parallel region).
  auto reduce = [&](int t) {
    for (std::size_t i = shares_[t]; i < shares_[t + 1]; ++i)
      for (auto& replica : replica_params_) add_gradient(params_[i], replica[i]);
  };
  run_on_threads(threads(), compute, reduce);

  StepResult total;
  total.correct = 0;
  double sum = 0.0;
  for (int t = 0; t < threads(); ++t) {
    sum += loss[t];
    total.items += items[t];
    if (total.correct >= 0) total.correct = correct[t] < 0 ? -1 : total.correct + correct[t];
  }
  total.loss = Tensor::scalar(sum, DType::Float64);
  return total;
}

}  // namespace uwaga::optim
