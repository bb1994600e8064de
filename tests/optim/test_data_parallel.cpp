// DataParallel: the batch dealt out to threads in micro-batches covers every row once; the
// gradient and loss it computes with replicas on several threads equal those of one
// forward/backward of the whole batch (float64, to rounding), and so do the shares several
// processes would hand a GradientReduction; replicas see the model's updates; an exception on
// any thread reaches the caller; forward() gives the model's output for the rows in order.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"
#include "nn/cross_entropy.h"
#include "core/shape_ops.h"
#include "core/storage.h"
#include "nn/loss.h"
#include "nn/vision_transformer.h"
#include "optim/data_parallel.h"

using namespace uwaga;
using namespace uwaga::optim;

namespace {

nn::VitConfig tiny_vit() {
  nn::VitConfig c;
  c.image_size = 8, c.channels = 1, c.patch = 4, c.dim = 8, c.depth = 2, c.heads = 2;
  c.mlp_dim = 16, c.num_classes = 3;
  return c;
}

std::shared_ptr<nn::VisionTransformer> make_model(std::uint64_t seed) {
  Generator gen(seed);
  auto model = std::make_shared<nn::VisionTransformer>(tiny_vit(), gen);
  model->to(DType::Float64);
  return model;
}

struct Data {
  Tensor images, labels;  // (B, 1, 8, 8) float64, (B,)
  Batch batch() const { return {{images}, labels}; }
};

Data make_data(std::int64_t batch) {
  Generator gen(7);
  Data d;
  d.images = Tensor::randn({batch, 1, 8, 8}, gen, DType::Float64);
  std::vector<std::int64_t> y(batch);
  for (auto& label : y) label = static_cast<std::int64_t>(gen.below(3));
  d.labels = Tensor::from_indices(y, {batch});
  return d;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.to_vector()) m = std::max(m, std::abs(v));
  return m;
}

// Every parameter's gradient in `got` equals the one in `expected`, to float64 rounding.
void check_same_gradients(const nn::Module& got, const nn::Module& expected) {
  const auto a = got.named_parameters(), b = expected.named_parameters();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].first);
    REQUIRE(a[i].second.grad().defined());
    const std::vector<double> x = a[i].second.grad().to_vector(), y = b[i].second.grad().to_vector();
    double err = 0;
    for (std::size_t k = 0; k < x.size(); ++k) err = std::max(err, std::abs(x[k] - y[k]));
    CHECK(err <= 1e-12 * std::max(1.0, max_abs(b[i].second.grad())));
  }
}

}  // namespace

TEST_CASE("deal_rows covers every row once, in balanced contiguous micro-batches",
          "[data_parallel]") {
  for (std::int64_t rows : {1, 2, 7, 128, 130})
    for (int threads : {1, 2, 3})
      for (std::int64_t micro : {0, 1, 5, 32}) {
        INFO("rows " << rows << ", threads " << threads << ", micro_batch " << micro);
        const auto plan = deal_rows(rows, threads, micro);
        REQUIRE(plan.size() == static_cast<std::size_t>(threads));
        std::int64_t next = 0;
        for (int t = 0; t < threads; ++t) {
          std::int64_t share = 0;
          for (const RowRange& r : plan[t]) {
            REQUIRE(r.begin == next);  // contiguous, in order, no gaps or overlaps
            REQUIRE(r.size() >= 1);
            if (micro > 0) REQUIRE(r.size() <= micro);
            share += r.size();
            next = r.end;
          }
          // Shares differ by at most one row.
          REQUIRE(std::abs(share - rows / threads) <= 1);
        }
        REQUIRE(next == rows);
      }
  REQUIRE_THROWS_WITH(deal_rows(0, 2, 0), Catch::Contains("at least one row"));
}

TEST_CASE("run_on_threads runs the second phase after every first phase, unless one threw",
          "[data_parallel]") {
  for (int threads : {1, 2, 3}) {
    std::vector<int> done(threads, 0), seen(threads, -1);
    run_on_threads(
        threads, [&](int t) { done[t] = 1; },
        [&](int t) {
          int sum = 0;  // every work(t) has finished before any then(t) starts
          for (int d : done) sum += d;
          seen[t] = sum;
        });
    for (int s : seen) CHECK(s == threads);
    std::vector<int> ran(threads, 0);
    REQUIRE_THROWS_WITH(run_on_threads(
                            threads,
                            [&](int t) {
                              if (t == threads - 1) fail("work ", t, " failed");
                            },
                            [&](int t) { ran[t] = 1; }),
                        Catch::Contains("failed"));
    for (int r : ran) CHECK(r == 0);
  }
}

TEST_CASE("share_by_size deals out the parameters in contiguous runs of similar size",
          "[data_parallel]") {
  std::vector<Tensor> params;
  for (std::int64_t n : {100, 10, 10, 50, 50, 1, 80}) params.push_back(Tensor::zeros({n}));
  for (int threads : {1, 2, 3, 5, 9}) {
    const std::vector<std::size_t> s = share_by_size(params, threads);
    REQUIRE(s.size() == static_cast<std::size_t>(threads) + 1);
    CHECK(s.front() == 0);
    CHECK(s.back() == params.size());
    for (int t = 0; t < threads; ++t) CHECK(s[t] <= s[t + 1]);
  }
  // Two threads, 301 elements: the most even cut is after the fourth (170 against 131).
  CHECK(share_by_size(params, 2)[1] == 4);
  REQUIRE_THROWS_WITH(share_by_size(params, 0), Catch::Contains("threads"));
}

TEST_CASE("DataParallel computes the whole batch's gradient and loss", "[data_parallel]") {
  const std::int64_t batch = 7;
  const Data data = make_data(batch);

  // Reference: one forward/backward of the whole batch.
  auto reference = make_model(1);
  Tensor loss = nn::cross_entropy(reference->forward(data.images), data.labels);
  loss.backward();

  for (int threads : {1, 2, 3})
    for (std::int64_t micro : {0, 2}) {
      INFO(threads << " threads, micro-batches of " << micro);
      auto model = make_model(1);
      DataParallel parallel(*model, {threads, micro});
      REQUIRE(parallel.threads() == threads);
      const StepResult r = parallel.gradient(data.batch(), nn::CrossEntropyLoss());
      CHECK(r.items == batch);
      CHECK(r.loss == Approx(loss.item()).epsilon(1e-12));
      check_same_gradients(*model, *reference);
    }
}

TEST_CASE("DataParallel weighs micro-batches by the targets the loss counts", "[data_parallel]") {
  // The loss is a mean over the labelled rows only (rows 1 and 4 are ignored, as padding is in
  // a translation's targets), so a micro-batch's share is its labelled rows over all of them,
  // not its rows over all rows.
  const std::int64_t batch = 7, ignored = -100;
  Data data = make_data(batch);
  std::vector<std::int64_t> y = data.labels.to_indices();
  y[1] = y[4] = ignored;
  data.labels = Tensor::from_indices(y, {batch});

  auto reference = make_model(1);
  Tensor loss = nn::cross_entropy(reference->forward(data.images), data.labels, {ignored, 0.0});
  loss.backward();

  for (int threads : {1, 2, 3})
    for (std::int64_t micro : {0, 2}) {
      INFO(threads << " threads, micro-batches of " << micro);
      auto model = make_model(1);
      DataParallel parallel(*model, {threads, micro});
      const StepResult r = parallel.gradient(data.batch(), nn::CrossEntropyLoss({ignored, 0.0}));
      CHECK(r.items == 5);
      CHECK(r.loss == Approx(loss.item()).epsilon(1e-12));
      check_same_gradients(*model, *reference);
    }
}

namespace {

// Stands in for `size` processes in one: each DataParallel computes process `rank`'s share of
// the batch, and all_reduce keeps what that process would send (nothing is added yet).
class RecordingReduction : public GradientReduction {
 public:
  RecordingReduction(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_reduce(const std::vector<Tensor>& params, std::vector<double>& sums) override {
    sent_grads.clear();
    for (const Tensor& p : params)
      sent_grads.push_back(p.grad().defined() ? p.grad().to_vector() : std::vector<double>{});
    sent_sums = sums;
  }
  std::string name() const override { return "recorded"; }
  void broadcast(const std::vector<Tensor>&) override {}
  void broadcast(std::string&) override {}
  bool any(bool flag) override { return flag; }
  std::string first_error(const std::string& message) override { return message; }
  std::vector<std::vector<double>> sent_grads;
  std::vector<double> sent_sums;

 private:
  int rank_, size_;
};

}  // namespace

TEST_CASE("the processes' shares of a batch add up to the whole batch's gradient",
          "[data_parallel]") {
  // What a reduction across processes receives: with N processes × T threads, each process's
  // gradient covers its own rows, and their sum is the one-process gradient (float64, 1e-12).
  const std::int64_t batch = 9;
  const Data data = make_data(batch);
  auto reference = make_model(1);
  Tensor loss = nn::cross_entropy(reference->forward(data.images), data.labels);
  loss.backward();
  const auto expected = reference->named_parameters();

  for (int processes : {2, 3})
    for (int threads : {1, 2}) {
      INFO(processes << " processes × " << threads << " threads");
      std::vector<std::vector<double>> total(expected.size());
      double loss_sum = 0, items = 0;
      for (int rank = 0; rank < processes; ++rank) {
        auto model = make_model(1);
        RecordingReduction reduction(rank, processes);
        DataParallel parallel(*model, {threads, 2}, &reduction);
        parallel.gradient(data.batch(), nn::CrossEntropyLoss());
        for (std::size_t i = 0; i < expected.size(); ++i) {
          const std::vector<double>& g = reduction.sent_grads[i];
          if (g.empty()) continue;
          total[i].resize(g.size(), 0.0);
          for (std::size_t k = 0; k < g.size(); ++k) total[i][k] += g[k];
        }
        loss_sum += reduction.sent_sums[0];
        items += reduction.sent_sums[1];
      }
      CHECK(items == batch);
      CHECK(loss_sum == Approx(loss.item()).epsilon(1e-12));
      for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO(expected[i].first);
        const std::vector<double> want = expected[i].second.grad().to_vector();
        REQUIRE(total[i].size() == want.size());
        double err = 0;
        for (std::size_t k = 0; k < want.size(); ++k) err = std::max(err, std::abs(total[i][k] - want[k]));
        CHECK(err <= 1e-12 * std::max(1.0, max_abs(expected[i].second.grad())));
      }
    }
}

TEST_CASE("DataParallel replicas share the model's values, not its gradients",
          "[data_parallel]") {
  auto model = make_model(1);
  DataParallel parallel(*model, {2, 0});
  REQUIRE(parallel.threads() == 2);
  auto replica = model->replica();  // as DataParallel makes its own
  replica->alias_parameters(*model);
  const Data data = make_data(4);
  // An update to the model (as the optimizer makes) is seen by a replica.
  model->named_parameters()[0].second.fill_(0.25);
  REQUIRE(replica->named_parameters()[0].second.flat(0) == 0.25);
  {
    NoGradGuard no_grad;
    const Tensor a = model->forward(data.images), b = replica->forward_batch({data.images});
    REQUIRE(a.to_vector() == b.to_vector());
  }
  // After a step the model holds the gradients; a replica keeps none of its own.
  parallel.gradient(data.batch(), nn::CrossEntropyLoss());
  for (auto& [name, p] : model->named_parameters()) REQUIRE(p.grad().defined());
  CHECK(replica->named_parameters()[0].second.dtype() == DType::Float64);
}

TEST_CASE("DataParallel steps reach a steady state without new allocations",
          "[data_parallel]") {
  // The replica's gradients are allocated on its thread and freed on this one every step; they
  // must come back to its thread's cache, or memory grows by a model's worth of gradients a step.
  auto model = make_model(1);
  DataParallel parallel(*model, {2, 2});
  const Data data = make_data(8);
  const nn::CrossEntropyLoss loss;
  auto step = [&] {
    model->zero_grad();
    parallel.gradient(data.batch(), loss);
  };
  for (int i = 0; i < 3; ++i) step();
  const AllocatorStats before = allocator_stats();
  for (int i = 0; i < 10; ++i) step();
  const AllocatorStats after = allocator_stats();
  CHECK(after.system_allocations == before.system_allocations);
  CHECK(after.cached_bytes <= before.cached_bytes);
}

namespace {

// A loss that fails on every micro-batch but the first, or returns no scalar.
class FailingLoss : public nn::CrossEntropyLoss {
 public:
  explicit FailingLoss(bool scalar) : scalar_(scalar) {}
  Tensor operator()(const Tensor& logits, const Tensor& y) const override {
    if (!scalar_) return Tensor();
    if (y.size(0) < 2) fail("the micro-batch of ", y.size(0), " rows failed");
    return nn::CrossEntropyLoss::operator()(logits, y);
  }

 private:
  bool scalar_;
};

}  // namespace

TEST_CASE("DataParallel passes on an error thrown on any thread", "[data_parallel]") {
  auto model = make_model(1);
  DataParallel parallel(*model, {2, 0});
  Data data = make_data(3);  // rows 0–1 on thread 0, row 2 on thread 1
  REQUIRE_THROWS_WITH(parallel.gradient(data.batch(), FailingLoss(true)),
                      Catch::Contains("the micro-batch of 1 rows failed"));
  REQUIRE_THROWS_WITH(parallel.gradient(data.batch(), FailingLoss(false)),
                      Catch::Contains("one element"));
  REQUIRE_THROWS_WITH(parallel.gradient({{data.images, data.images}, data.labels},
                                        nn::CrossEntropyLoss()),
                      Catch::Contains("VisionTransformer::forward_batch takes 1 input"));
}

TEST_CASE("alias_parameters checks that the modules match", "[data_parallel]") {
  auto model = make_model(1);
  Generator gen(3);
  nn::VitConfig other = tiny_vit();
  other.dim = 12;
  nn::VisionTransformer wider(other, gen);
  wider.to(DType::Float64);
  REQUIRE_THROWS_WITH(wider.alias_parameters(*model), Catch::Contains("cls_token") ||
                                                          Catch::Contains("in the source"));
  nn::VisionTransformer single(tiny_vit(), gen);  // float32
  REQUIRE_THROWS_WITH(single.alias_parameters(*model), Catch::Contains("float32") &&
                                                           Catch::Contains("float64"));
}

TEST_CASE("DataParallel::forward gives the model's output, rows in order, without a graph",
          "[data_parallel]") {
  auto model = make_model(1);
  const Data data = make_data(7);
  model->eval();
  Tensor expected;
  {
    NoGradGuard no_grad;
    expected = model->forward(data.images);  // (7, 3)
  }
  for (int threads : {1, 2, 3})
    for (std::int64_t micro : {0, 2}) {
      INFO(threads << " threads, micro-batches of " << micro);
      DataParallel parallel(*model, {threads, micro});
      const Tensor got = parallel.forward({data.images});
      REQUIRE(got.shape() == expected.shape());
      CHECK_FALSE(got.requires_grad());
      const std::vector<double> a = got.to_vector(), b = expected.to_vector();
      double err = 0;
      for (std::size_t k = 0; k < a.size(); ++k) err = std::max(err, std::abs(a[k] - b[k]));
      CHECK(err <= 1e-12 * std::max(1.0, max_abs(expected)));
    }
  DataParallel parallel(*model, {2, 0});
  REQUIRE_THROWS_WITH(parallel.forward({data.images, slice(data.images, 0, 0, 3)}),
                      Catch::Contains("input 1 has shape (3, 1, 8, 8)") &&
                          Catch::Contains("input 0, (7, 1, 8, 8)"));
  REQUIRE_THROWS_WITH(parallel.forward({}), Catch::Contains("no inputs"));
}
