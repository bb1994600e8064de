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
// accumulate its part of ∇L. At the end the replicas' gradients are added into the model's, and
// the GradientReduction adds up those of the processes training the same batch (one, by
// default: gradient_reduction.h).
// Replicas alias the model's parameter storage (nn::Module::alias_parameters): the optimizer
// updates the model and every replica sees the new values; only the gradients are per replica.
//
// Buffers (BatchNorm's running statistics) are aliased too, read-only (nn::Module::alias_buffers):
// only the model itself — thread 0 — updates them, from the micro-batches it runs, while the
// replicas normalise with their own micro-batches' statistics and write nothing, as PyTorch's
// DistributedDataParallel keeps rank 0's buffers (broadcast_buffers) and, without SyncBatchNorm,
// normalises each rank's batch on its own. So no thread writes what another reads (in eval mode
// every replica reads the model's running statistics, which nobody writes), and the statistics
// follow a fixed sequence of micro-batches: a run is as repeatable as its gradients. Batch
// statistics per micro-batch make the gradient depend on the split (threads, micro_batch), beyond
// the last bits. With several processes each keeps its own thread 0's statistics; process 0's are
// the ones that are evaluated and saved (the Trainer evaluates and saves there alone), and resuming
// loads them into every process.
//
// A loss that is a mean over something other than rows — a translation's loss is a mean over
// target words, and sentences have different lengths — splits the same way with B_c/B replaced by
// the micro-batch's share of those items, n_c/n, which the loss counts (nn/loss.h).
//
// Micro-batches help on one thread too: `micro_batch` rows at a time keep a block's activations
// in the core's cache (gradient accumulation — the same ∇L, summed in another order).
//
// The split depends only on B, the process and thread counts and micro_batch: a run is
// reproducible for given counts, and differs from a run on other counts in the last bits
// (summation order).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"
#include "data/batch_source.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "optim/gradient_reduction.h"

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

// The batch's rows dealt out: worker w gets a contiguous share of ⌊rows/workers⌋ or one more,
// cut into the fewest micro-batches of at most micro_batch rows (sizes differing by at most one).
std::vector<std::vector<RowRange>> deal_rows(std::int64_t rows, int workers,
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

// The loss of one step, summed over its micro-batches, replicas and processes.
struct StepResult {
  double loss = 0;            // the batch's mean loss
  std::int64_t items = 0;     // examples, as the loss's items() counts (images, target words)
  std::int64_t correct = -1;  // of those, predicted right; −1 when accuracy does not apply
};

class DataParallel {
 public:
  // `model` (and `reduction`, when given) must outlive this object. Without a reduction the
  // step runs in one process.
  DataParallel(nn::Model& model, DataParallelOptions options = {},
               GradientReduction* reduction = nullptr);

  int threads() const { return static_cast<int>(replicas_.size()) + 1; }
  std::int64_t micro_batch() const { return options_.micro_batch; }
  GradientReduction& reduction() { return *reduction_; }

  // Forward, loss and backward of this process's share of `batch`. Afterwards the model's
  // gradients are those of the whole batch's mean loss (added to what they held before, as
  // backward() does). `dropout_seed` seeds the Dropouts of the micro-batch of rows [b, e) with
  // dropout_seed + b·φ, whichever replica runs it.
  StepResult gradient(const Batch& batch, const nn::Loss& loss, std::uint64_t dropout_seed = 0);

  // The model's output for `inputs` (each (B, …), rows first), computed as the gradient is: thread
  // t runs its replica over its share of the rows, micro_batch rows at a time, and the outputs
  // are joined in row order. No graph is recorded; the replicas take the model's mode (evaluate
  // in eval mode, e.g. inside an nn::InferenceScope). For evaluation, where splitting each op
  // across the threads is as slow for a small model as it is in training. Each row's output is
  // the one model.forward_batch(inputs) gives, up to the last bits (how its products are cut).
  Tensor forward(const std::vector<Tensor>& inputs);

 private:
  nn::Model& model_;
  std::vector<std::shared_ptr<nn::Model>> replicas_;  // thread t ≥ 1 runs replicas_[t − 1]
  DataParallelOptions options_;
  SingleProcess single_process_;
  GradientReduction* reduction_;
  // The parameters of the model and of each replica, in the same order; thread t adds up the
  // gradients of parameters [shares_[t], shares_[t + 1]).
  std::vector<Tensor> params_;
  std::vector<std::vector<Tensor>> replica_params_;
  std::vector<std::size_t> shares_;
};

}  // namespace uwaga::optim
