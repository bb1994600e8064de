// DataParallel: the batch dealt out to threads in micro-batches covers every row once; the
// gradient and loss it computes with replicas on several threads equal those of one
// forward/backward of the whole batch (float64, to rounding); replicas see the model's updates;
// an exception on any thread reaches the caller.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/shape_ops.h"
#include "core/storage.h"
#include "nn/cross_entropy.h"
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
      std::uint64_t replica_seed = 100;
      DataParallel<nn::VisionTransformer> parallel(
          *model, [&] { return make_model(replica_seed++); }, {threads, micro});
      REQUIRE(parallel.threads() == threads);
      StepResult r = parallel.step(batch, [&](nn::VisionTransformer& m, RowRange rows) {
        StepResult s;
        Tensor labels = slice(data.labels, 0, rows.begin, rows.end);
        s.loss = nn::cross_entropy(m.forward(slice(data.images, 0, rows.begin, rows.end)), labels);
        s.items = labels.numel();
        return s;
      });
      CHECK(r.items == batch);
      CHECK(r.loss.item() == Approx(loss.item()).epsilon(1e-12));
      check_same_gradients(*model, *reference);
    }
}

TEST_CASE("DataParallel weighs micro-batches by weight_of for a mean over other items",
          "[data_parallel]") {
  // The loss is a mean over the labelled rows only (rows 1 and 4 are ignored, as padding is in
  // a translation's targets), so a micro-batch's share is its labelled rows over all of them,
  // not its rows over all rows.
  const std::int64_t batch = 7, ignored = -100;
  Data data = make_data(batch);
  std::vector<std::int64_t> y = data.labels.to_indices();
  y[1] = y[4] = ignored;
  data.labels = Tensor::from_indices(y, {batch});
  auto labelled = [&](RowRange rows) {
    std::int64_t n = 0;
    for (std::int64_t i = rows.begin; i < rows.end; ++i) n += y[i] != ignored;
    return n;
  };

  auto reference = make_model(1);
  Tensor loss = nn::cross_entropy(reference->forward(data.images), data.labels, {ignored, 0.0});
  loss.backward();

  for (int threads : {1, 2, 3})
    for (std::int64_t micro : {0, 2}) {
      INFO(threads << " threads, micro-batches of " << micro);
      auto model = make_model(1);
      std::uint64_t replica_seed = 100;
      DataParallel<nn::VisionTransformer> parallel(
          *model, [&] { return make_model(replica_seed++); }, {threads, micro});
      StepResult r = parallel.step(
          batch,
          [&](nn::VisionTransformer& m, RowRange rows) {
            StepResult s;
            s.loss = nn::cross_entropy(m.forward(slice(data.images, 0, rows.begin, rows.end)),
                                       slice(data.labels, 0, rows.begin, rows.end), {ignored, 0.0});
            s.items = labelled(rows);
            return s;
          },
          [&](RowRange rows) { return static_cast<double>(labelled(rows)) / 5.0; });
      CHECK(r.items == 5);
      CHECK(r.loss.item() == Approx(loss.item()).epsilon(1e-12));
      check_same_gradients(*model, *reference);
    }
}

TEST_CASE("DataParallel replicas share the model's values, not its gradients",
          "[data_parallel]") {
  auto model = make_model(1);
  std::vector<std::shared_ptr<nn::VisionTransformer>> made;
  DataParallel<nn::VisionTransformer> parallel(
      *model,
      [&] {
        made.push_back(make_model(2));
        return made.back();
      },
      {2, 0});
  REQUIRE(made.size() == 1);
  const Data data = make_data(4);
  // An update to the model (as the optimizer makes) is seen by the replica.
  model->named_parameters()[0].second.fill_(0.25);
  REQUIRE(made[0]->named_parameters()[0].second.flat(0) == 0.25);
  {
    NoGradGuard no_grad;
    const Tensor a = model->forward(data.images), b = made[0]->forward(data.images);
    REQUIRE(a.to_vector() == b.to_vector());
  }
  // After a step the replica's gradients have been handed to the model.
  parallel.step(4, [&](nn::VisionTransformer& m, RowRange rows) {
    StepResult s;
    s.loss = nn::cross_entropy(m.forward(slice(data.images, 0, rows.begin, rows.end)),
                               slice(data.labels, 0, rows.begin, rows.end));
    return s;
  });
  for (auto& [name, p] : made[0]->named_parameters()) REQUIRE_FALSE(p.grad().defined());
  for (auto& [name, p] : model->named_parameters()) REQUIRE(p.grad().defined());
}

TEST_CASE("DataParallel steps reach a steady state without new allocations",
          "[data_parallel]") {
  // The replica's gradients are allocated on its thread and freed on this one every step; they
  // must come back to its thread's cache, or memory grows by a model's worth of gradients a step.
  auto model = make_model(1);
  DataParallel<nn::VisionTransformer> parallel(*model, [] { return make_model(2); }, {2, 2});
  const Data data = make_data(8);
  auto step = [&] {
    model->zero_grad();
    parallel.step(8, [&](nn::VisionTransformer& m, RowRange rows) {
      StepResult s;
      s.loss = nn::cross_entropy(m.forward(slice(data.images, 0, rows.begin, rows.end)),
                                 slice(data.labels, 0, rows.begin, rows.end));
      return s;
    });
  };
  for (int i = 0; i < 3; ++i) step();
  const AllocatorStats before = allocator_stats();
  for (int i = 0; i < 10; ++i) step();
  const AllocatorStats after = allocator_stats();
  CHECK(after.system_allocations == before.system_allocations);
  CHECK(after.cached_bytes <= before.cached_bytes);
}

TEST_CASE("DataParallel passes on an error thrown on any thread", "[data_parallel]") {
  auto model = make_model(1);
  DataParallel<nn::VisionTransformer> parallel(*model, [] { return make_model(2); }, {2, 0});
  const Data data = make_data(4);
  auto failing = [&](nn::VisionTransformer& m, RowRange rows) -> StepResult {
    if (rows.begin > 0) fail("micro-batch at row ", rows.begin, " failed");
    StepResult s;
    s.loss = nn::cross_entropy(m.forward(slice(data.images, 0, rows.begin, rows.end)),
                               slice(data.labels, 0, rows.begin, rows.end));
    return s;
  };
  REQUIRE_THROWS_WITH(parallel.step(4, failing), Catch::Contains("micro-batch at row 2 failed"));
  auto no_loss = [&](nn::VisionTransformer&, RowRange) { return StepResult{}; };
  REQUIRE_THROWS_WITH(parallel.step(4, no_loss), Catch::Contains("one element"));
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
