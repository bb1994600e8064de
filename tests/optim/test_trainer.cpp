// The training loop on a tiny task: XOR of the signs of two coordinates, learned by a two-layer
// network with dropout.
// The loss goes down; a run interrupted (by max_steps or by SIGINT) and resumed reproduces the
// uninterrupted run's losses bit for bit; a NaN stops the run without touching the last
// checkpoint; the JSONL log parses.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/elementwise.h"
#include "core/indexing.h"
#include "core/reduction.h"
#include "core/safetensors.h"
#include "nn/gelu.h"
#include "nn/dropout.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "optim/adam.h"
#include "optim/checkpoint.h"
#include "optim/jsonl_log.h"
#include "optim/lr_schedule.h"
#include "optim/trainer.h"
#include "tests/support/temp_dir.h"
#include "tests/support/same_parameters.h"

using namespace uwaga;
using uwaga::testing::parameter_values;
using namespace uwaga::optim;

namespace {

using uwaga::testing::TempDir;

// n points uniform in [-1, 1]², label 1 when the two coordinates have the same sign.
void make_xor(std::int64_t n, Generator& gen, Tensor& x, Tensor& y) {
  x = Tensor::uniform({n, 2}, gen, -1.0, 1.0);  // (n, 2)
  std::vector<std::int64_t> labels(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    labels[static_cast<std::size_t>(i)] = x.at({i, 0}) * x.at({i, 1}) > 0 ? 1 : 0;
  y = Tensor::from_indices(labels, {n});  // (n,)
}

// The data keep the contract of data/batch_source.h: batch i of epoch e comes from (seed, e, i).
class XorData : public BatchSource {
 public:
  static constexpr std::int64_t kTrain = 256, kTest = 256, kBatch = 32;

  explicit XorData(std::uint64_t seed) : seed_(seed) {
    Generator data(seed);
    make_xor(kTrain, data, x_train, y_train);
    make_xor(kTest, data, x_test, y_test);
  }

  std::int64_t batches_per_epoch() const override { return kTrain / kBatch; }

  void begin_epoch(std::int64_t epoch) override {
    Generator shuffle(seed_ * 1000003 + static_cast<std::uint64_t>(epoch));
    order_.resize(kTrain);
    for (std::int64_t i = 0; i < kTrain; ++i) order_[static_cast<std::size_t>(i)] = i;
    for (std::int64_t i = kTrain - 1; i > 0; --i)  // Fisher–Yates
      std::swap(order_[static_cast<std::size_t>(i)],
                order_[static_cast<std::size_t>(shuffle.below(static_cast<std::uint64_t>(i + 1)))]);
  }

  Batch batch(std::int64_t index) override {
    std::vector<std::int64_t> ids(order_.begin() + index * kBatch,
                                  order_.begin() + (index + 1) * kBatch);
    Tensor idx = Tensor::from_indices(ids, {kBatch});
    return {{index_select(x_train, 0, idx)}, index_select(y_train, 0, idx)};  // (B, 2), (B,)
  }

  Tensor x_train, y_train, x_test, y_test;

 private:
  std::uint64_t seed_;
  std::vector<std::int64_t> order_;
};

// A two-layer network with dropout on its hidden layer, whose masks the trainer seeds (a resumed
// run must draw the same ones).
class XorNet : public nn::Model {
 public:
  explicit XorNet(std::uint64_t seed) {
    Generator init(seed);
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(nn::LinearOptions{.in = 2, .out = 32}, init));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(nn::LinearOptions{.in = 32, .out = 2}, init));
    dropout = register_module("dropout", std::make_shared<nn::Dropout>(0.1));
  }
  Tensor forward(const Tensor& x) {  // (B, 2) -> logits (B, 2)
    return fc2->forward(dropout->forward(nn::GELU().forward(fc1->forward(x))));
  }
  Tensor forward_batch(const std::vector<Tensor>& inputs) override { return forward(inputs.at(0)); }
  std::shared_ptr<Model> replica() const override { return std::make_shared<XorNet>(0); }

  std::shared_ptr<nn::Linear> fc1, fc2;
  std::shared_ptr<nn::Dropout> dropout;
};

// Cross-entropy, with hooks that break a chosen call, counted from 1.
class XorLoss : public nn::CrossEntropyLoss {
 public:
  explicit XorLoss(XorNet& net) : net_(net) {}
  int nan_loss_at = 0, nan_grad_at = 0, sigint_at = 0;
  int huge_grad_at = 0;  // a finite loss and gradient whose square overflows float32
  mutable int calls = 0;

  Tensor operator()(const Tensor& logits, const Tensor& y) const override {
    ++calls;
    Tensor loss = nn::CrossEntropyLoss::operator()(logits, y);
    if (calls == nan_loss_at) loss = loss * std::numeric_limits<double>::quiet_NaN();
    if (calls == nan_grad_at) {
      // A finite loss whose gradient is NaN: d√u/du = 1/(2√u) at u = 0, times 0.
      Tensor w = net_.fc1->weight;
      loss = loss + 0.0 * sum(sqrt(w - w));
    }
    if (calls == huge_grad_at) {
      // Adds 0 to the loss, and 1e21 to the gradient of each element of fc1.weight.
      Tensor w = net_.fc1->weight;
      loss = loss + 1e21 * sum(w - w.detach());
    }
    if (calls == sigint_at) ::raise(SIGINT);
    return loss;
  }

 private:
  XorNet& net_;
};

// Everything one training run needs, built the same way each time from the same seed.
struct Setup {
  explicit Setup(double lr = 0.05, std::int64_t total_steps = 48)
      : adam(make_param_groups(net, 0.01), AdamOptions{lr}), schedule(lr, 5, total_steps, lr / 20) {}
  XorData data{42};
  XorNet net{44};
  XorLoss loss{net};
  Adam adam;
  WarmupCosineLr schedule;

  Trainer trainer(const TrainerOptions& o) { return Trainer(net, data, loss, adam, schedule, o); }
  TrainSummary fit(const TrainerOptions& o) {
    return trainer(o).fit([this]() -> std::map<std::string, double> {
      const Tensor logits = net.forward(data.x_test);
      return {{"accuracy", static_cast<double>(loss.correct(logits, data.y_test)) / XorData::kTest},
              {"loss", loss.nn::CrossEntropyLoss::operator()(logits, data.y_test).item()}};
    });
  }
};

TrainerOptions options(const std::string& out_dir) {
  TrainerOptions o;
  o.epochs = 6;  // 6 × 8 = 48 steps
  o.out_dir = out_dir;
  o.log_every = 4;
  o.clip_norm = 1.0;
  o.quiet = true;
  o.config = R"({"task": "xor", "hidden": 32})";
  o.parallel.threads = 1;  // the loss's hooks reach into the model itself
  return o;
}

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

double mean(const std::vector<double>& v, std::size_t begin, std::size_t end) {
  double s = 0;
  for (std::size_t i = begin; i < end; ++i) s += v[i];
  return s / static_cast<double>(end - begin);
}

}  // namespace

TEST_CASE("trainer: the loss of a tiny MLP on XOR goes down", "[optim][trainer]") {
  TempDir dir("trainer-learns");
  const std::int64_t epochs = 12;
  Setup s(0.05, epochs * 8);
  TrainerOptions o = options(dir.str());
  o.epochs = epochs;
  TrainSummary summary = s.fit(o);

  REQUIRE(summary.steps == epochs * 8);
  REQUIRE(summary.losses.size() == static_cast<std::size_t>(epochs * 8));
  CHECK(summary.epochs_done == epochs);
  CHECK_FALSE(summary.interrupted);
  CHECK_FALSE(summary.stopped_non_finite);
  const std::size_t n = summary.losses.size();
  const double first = mean(summary.losses, 0, 8), last = mean(summary.losses, n - 8, n);
  INFO("first epoch mean loss " << first << ", last " << last << ", test accuracy "
                                << summary.last_eval["accuracy"]);
  CHECK(last < 0.5 * first);
  CHECK(summary.last_eval.at("accuracy") > 0.85);
  CHECK(s.net.is_training());  // back in train mode after evaluation
}

TEST_CASE("trainer: resuming reproduces an uninterrupted run bit for bit", "[optim][trainer]") {
  // Run A: 48 steps in one go.
  TempDir dir_a("trainer-resume-a");
  Setup a;
  TrainSummary full = a.fit(options(dir_a.str()));
  REQUIRE(full.losses.size() == 48);

  // Run B: stopped by max_steps after k steps (mid-epoch, at an epoch's end, with step
  // checkpoints), then resumed by fresh objects from the checkpoint alone.
  for (std::int64_t k : {5, 8, 19, 47}) {
    DYNAMIC_SECTION("stopped after " << k << " steps") {
      TempDir dir_b("trainer-resume-b");
      std::vector<double> losses;
      {
        Setup b;
        TrainerOptions o = options(dir_b.str());
        o.max_steps = k;
        o.checkpoint_every = 3;
        TrainSummary first = b.fit(o);
        REQUIRE(first.steps == k);
        REQUIRE_FALSE(first.interrupted);
        losses = first.losses;
        CHECK(read_checkpoint_info(dir_b.str() + "/checkpoint.safetensors").step == k);
      }
      Setup b;
      TrainerOptions o = options(dir_b.str());
      o.resume = true;
      o.max_steps = 48;
      TrainSummary second = b.fit(o);
      CHECK(second.steps == 48);
      CHECK(second.epochs_done == 6);
      losses.insert(losses.end(), second.losses.begin(), second.losses.end());

      REQUIRE(losses.size() == full.losses.size());
      REQUIRE(losses == full.losses);  // exact, not approximate
      REQUIRE(parameter_values(b.net) == parameter_values(a.net));
      CHECK(second.last_eval == full.last_eval);
      // Each epoch's train loss and accuracy cover all its steps, across the resume too.
      auto epoch_figures = [](const std::string& log) {
        std::vector<std::pair<double, double>> figures;
        for (const nlohmann::json& r : read_jsonl(log + "/log.jsonl"))
          if (r["type"] == "epoch")
            figures.emplace_back(r["train_loss"].get<double>(), r["train_accuracy"].get<double>());
        return figures;
      };
      CHECK(epoch_figures(dir_b.str()) == epoch_figures(dir_a.str()));
    }
  }
}

TEST_CASE("trainer: SIGINT finishes the step, saves, and the run resumes exactly",
          "[optim][trainer]") {
  TempDir dir_a("trainer-sigint-a"), dir_b("trainer-sigint-b");
  Setup a;
  TrainSummary full = a.fit(options(dir_a.str()));

  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);

  Setup b;
  b.loss.sigint_at = 13;
  TrainSummary first = b.fit(options(dir_b.str()));
  CHECK(first.interrupted);
  CHECK(first.steps == 13);  // the step that saw the signal completed
  REQUIRE(first.losses.size() == 13);
  CHECK_THAT(first.message, Catch::Contains("interrupted by SIGINT after step 13") &&
                                Catch::Contains("checkpoint saved"));
  CHECK(read_checkpoint_info(dir_b.str() + "/checkpoint.safetensors").step == 13);

  // The previous handler is back.
  struct sigaction after {};
  sigaction(SIGINT, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);

  Setup c;
  TrainerOptions o = options(dir_b.str());
  o.resume = true;
  TrainSummary second = c.fit(o);
  CHECK_FALSE(second.interrupted);
  std::vector<double> losses = first.losses;
  losses.insert(losses.end(), second.losses.begin(), second.losses.end());
  REQUIRE(losses == full.losses);
  REQUIRE(parameter_values(c.net) == parameter_values(a.net));
}

TEST_CASE("trainer: a non-finite loss or gradient stops the run and keeps the last checkpoint",
          "[optim][trainer]") {
  TempDir dir("trainer-nan");
  const std::string path = dir.str() + "/checkpoint.safetensors";
  Setup s;
  TrainerOptions o = options(dir.str());
  o.checkpoint_every = 1;

  SECTION("NaN loss at step 3") {
    s.loss.nan_loss_at = 3;
    TrainSummary summary = s.fit(o);
    CHECK(summary.stopped_non_finite);
    CHECK(summary.steps == 2);
    CHECK(summary.losses.size() == 2);
    CHECK_THAT(summary.message, Catch::StartsWith("step 3 (epoch 1, batch 3/8): the loss is nan") &&
                                    Catch::Contains("last checkpoint (step 2"));
  }
  SECTION("NaN gradient at step 3") {
    s.loss.nan_grad_at = 3;
    TrainSummary summary = s.fit(o);
    CHECK(summary.stopped_non_finite);
    CHECK(summary.steps == 2);
    CHECK_THAT(summary.message, Catch::StartsWith("step 3") &&
                                    Catch::Contains("the gradient norm is nan"));
  }
  // The checkpoint still holds step 2, and it is the model as it was after step 2.
  CHECK(read_checkpoint_info(path).step == 2);
  Setup fresh;
  load_checkpoint(path, fresh.net, &fresh.adam);
  CHECK(parameter_values(fresh.net) == parameter_values(s.net));
  bool logged = false;
  for (const auto& record : read_jsonl(dir.str() + "/log.jsonl"))
    logged |= record["type"] == "stop" && record["reason"] == "non_finite";
  CHECK(logged);
}

TEST_CASE("trainer: the JSONL log has a record per logged step and per epoch, across resumes",
          "[optim][trainer]") {
  TempDir dir("trainer-jsonl");
  {
    Setup s;
    TrainerOptions o = options(dir.str());
    o.epochs = 2;
    o.max_steps = 10;
    s.fit(o);
  }
  Setup s;
  TrainerOptions o = options(dir.str());
  o.epochs = 2;
  o.resume = true;
  s.fit(o);

  std::vector<nlohmann::json> records = read_jsonl(dir.str() + "/log.jsonl");
  std::vector<std::int64_t> step_records, epoch_records;
  int resumes = 0, starts = 0;
  std::vector<std::string> stops;  // the reasons, in order
  for (const auto& r : records) {
    REQUIRE(r.contains("type"));
    if (r["type"] == "stop") stops.push_back(r["reason"].get<std::string>());
    if (r["type"] == "step") {
      for (const char* key : {"step", "epoch", "batch", "loss", "lr", "grad_norm", "items_per_s",
                              "accuracy"})
        CHECK(r.contains(key));
      CHECK(r["loss"].get<double>() > 0);
      CHECK(r["items_per_s"].get<double>() > 0);
      step_records.push_back(r["step"].get<std::int64_t>());
    } else if (r["type"] == "epoch") {
      for (const char* key : {"epoch", "step", "lr", "seconds", "train_loss", "train_accuracy",
                              "test_accuracy", "test_loss"})
        CHECK(r.contains(key));
      epoch_records.push_back(r["epoch"].get<std::int64_t>());
    } else if (r["type"] == "resume") {
      ++resumes;
      CHECK(r["step"] == 10);
    } else if (r["type"] == "start") {
      ++starts;
      CHECK(r["epochs"] == 2);
      CHECK(r["batches_per_epoch"] == 8);
    }
  }
  CHECK(step_records == std::vector<std::int64_t>{4, 8, 12, 16});
  CHECK(epoch_records == std::vector<std::int64_t>{1, 2});
  CHECK(resumes == 1);
  CHECK(starts == 1);
  CHECK(records.front()["type"] == "start");
  // The budget stopped the first part; the second ran every epoch, and its last record says so
  // (a crashed run's log would just end).
  CHECK(stops == std::vector<std::string>{"max_steps", "finished"});
  CHECK(records.back()["type"] == "stop");
  CHECK(records.back()["reason"] == "finished");
  CHECK(records.back()["step"] == 16);
  CHECK(records.back()["message"] == "finished 2 epochs after step 16");
}

TEST_CASE("trainer: eval_every evaluates every n-th epoch and the last", "[optim][trainer]") {
  TempDir dir("trainer-eval-every");
  Setup s;
  TrainerOptions o = options(dir.str());
  o.epochs = 5;
  o.eval_every = 2;
  int calls = 0;
  const TrainSummary summary = s.trainer(o).fit([&]() -> std::map<std::string, double> {
    ++calls;
    return {{"accuracy", 0.5}};
  });
  CHECK(calls == 3);  // after epochs 2, 4 and 5
  CHECK(summary.last_eval.at("accuracy") == 0.5);
  std::vector<std::int64_t> evaluated, all;
  for (const auto& r : read_jsonl(dir.str() + "/log.jsonl")) {
    if (r["type"] != "epoch") continue;
    all.push_back(r["epoch"].get<std::int64_t>());
    if (r.contains("test_accuracy")) evaluated.push_back(r["epoch"].get<std::int64_t>());
  }
  CHECK(all == std::vector<std::int64_t>{1, 2, 3, 4, 5});
  CHECK(evaluated == std::vector<std::int64_t>{2, 4, 5});

  // 0: never, and a negative count is refused.
  TempDir never("trainer-eval-never");
  Setup t;
  o = options(never.str());
  o.epochs = 2;
  o.eval_every = 0;
  calls = 0;
  t.trainer(o).fit([&]() -> std::map<std::string, double> { return {{"accuracy", ++calls}}; });
  CHECK(calls == 0);
  o = options("");
  o.eval_every = -1;
  CHECK_THROWS_WITH(t.trainer(o), Catch::Contains("eval_every must be >= 0"));
}

TEST_CASE("trainer: save_every writes the checkpoint every n-th epoch and after the last",
          "[optim][trainer]") {
  TempDir dir("trainer-save-every");
  Setup s;
  TrainerOptions o = options(dir.str());
  o.epochs = 5;
  o.save_every = 2;
  const std::string checkpoint = dir.str() + "/checkpoint.safetensors";
  // Each epoch's evaluation runs before its save: it sees the checkpoint of the epochs before.
  std::vector<std::int64_t> saved_before;
  s.trainer(o).fit([&]() -> std::map<std::string, double> {
    saved_before.push_back(std::filesystem::exists(checkpoint)
                               ? read_checkpoint_info(checkpoint).step : std::int64_t{-1});
    return {{"accuracy", 0.5}};
  });
  // 8 steps an epoch: none before epoch 3's end, then step 16 (epoch 2) and step 32 (epoch 4).
  CHECK(saved_before == std::vector<std::int64_t>{-1, -1, 16, 16, 32});
  CHECK(read_checkpoint_info(checkpoint).step == 40);  // the last epoch always saves

  // A resume continues from the last checkpoint written, and 0 is refused.
  o.resume = true;
  o.epochs = 6;
  Setup t;
  CHECK(t.trainer(o).fit([] { return std::map<std::string, double>{}; }).steps == 48);
  o = options("");
  o.save_every = 0;
  CHECK_THROWS_WITH(t.trainer(o), Catch::Contains("save_every must be >= 1"));
}

TEST_CASE("trainer: options and resume errors are sentences", "[optim][trainer]") {
  TempDir dir("trainer-errors");
  Setup s;
  TrainerOptions o = options(dir.str() + "/empty");
  o.resume = true;
  CHECK_THROWS_WITH(s.fit(o),
                    Catch::Contains("cannot resume: there is no checkpoint at") &&
                        Catch::Contains("checkpoint.safetensors"));
  o = options("");
  o.resume = true;
  CHECK_THROWS_WITH(s.trainer(o),
                    Catch::Contains("resume needs out_dir"));
  o = options("");
  o.checkpoint_every = -1;
  CHECK_THROWS_WITH(s.trainer(o),
                    Catch::Contains("checkpoint_every must be >= 0"));
  // An optimizer over another model's parameters would leave the task's model untrained.
  Setup other;
  o = options("");
  CHECK_THROWS_WITH(Trainer(s.net, s.data, s.loss, other.adam, s.schedule, o).fit(),
                    Catch::Contains("is not a parameter of the model"));
  // No out_dir: trains without writing anything.
  o = options("");
  o.epochs = 1;
  CHECK(s.fit(o).steps == 8);
}

// Before: the trainer checked only the parameters before saving. A gradient of 1e21 is finite
// (so is its norm, in double), but Adam squares it in float32: its second moment became inf, the
// parameter finite but frozen for good, and that inf was saved — a checkpoint that
// load_checkpoint now refuses.
TEST_CASE("trainer: an optimizer state turned inf stops the run and keeps the last checkpoint",
          "[optim][trainer]") {
  TempDir dir("trainer-inf-state");
  const std::string path = dir.file("checkpoint.safetensors");
  Setup s;
  TrainerOptions o = options(dir.str());
  o.checkpoint_every = 1;
  o.clip_norm = 0;  // clipping would tame the gradient
  s.loss.huge_grad_at = 3;
  TrainSummary summary = s.fit(o);
  CHECK(summary.stopped_non_finite);
  CHECK_THAT(summary.message,
             Catch::StartsWith("after step 3: optimizer state 'fc1.weight.exp_avg_sq' holds NaN "
                               "or inf") &&
                 Catch::Contains("the last checkpoint (step 2"));
  CHECK(read_checkpoint_info(path).step == 2);
  Setup fresh;
  CHECK_NOTHROW(load_checkpoint(path, fresh.net, &fresh.adam));
}

// Before: nothing kept two processes from training into one directory at once (a second
// terminal, or --resume while the run still went on): their logs interleaved and each
// overwrote the other's checkpoint.
TEST_CASE("trainer: a directory another run is training into is refused", "[optim][trainer]") {
  TempDir dir("trainer-lock");
  Setup s;
  TrainerOptions o = options(dir.str());
  o.epochs = 1;
  {
    // Another run's lock (flock locks of two open() calls conflict even within one process).
    const int fd = ::open(dir.str().c_str(), O_RDONLY | O_DIRECTORY);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
    CHECK_THROWS_WITH(s.fit(o),
                      Catch::Contains("another run is already training into '" + dir.str() + "'"));
    CHECK(dir.entries().empty());  // not a line of log written into the other run's directory
    ::close(fd);
  }
  // Once that run has ended, the directory is free; and fit() releases it when it returns.
  CHECK(s.fit(o).steps == 8);
  o.resume = true;
  o.epochs = 2;
  CHECK(s.fit(o).steps == 16);
}

namespace {

// Makes writes past `bytes` in any file fail with EFBIG, as a full disk would, while it lives.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_) == 0);
    struct rlimit limit = old_;
    limit.rlim_cur = bytes;
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of death
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &limit) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  struct rlimit old_ {};
  void (*old_handler_)(int) = nullptr;
};

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

// Before: a failed save (a full disk) ended fit() with save_safetensors' error alone, and the log
// had no stop record: it ended on an "epoch" record as if the epoch had been saved.
TEST_CASE("trainer: a checkpoint that cannot be saved ends the run with a logged error",
          "[optim][trainer]") {
  TempDir dir("trainer-save-fails");
  const std::string path = dir.file("checkpoint.safetensors");
  Setup s;
  TrainerOptions o = options(dir.str());
  o.log_every = 0;
  std::string error;
  auto fit_under = [&](rlim_t bytes) {  // fit() with files limited to `bytes`; keeps its error
    FileSizeLimit limit(bytes);
    try {
      s.fit(o);
    } catch (const Error& e) {
      error = e.what();
    }
  };
  SECTION("no checkpoint yet") {
    fit_under(2000);  // room for the log's few records, not for a checkpoint
    CHECK_THAT(error, Catch::StartsWith("Trainer: cannot save the checkpoint of step 8 (none was "
                                        "written before): save_safetensors") &&
                          Catch::Contains("File too large"));
    CHECK(dir.entries() == std::vector<std::string>{"log.jsonl"});
  }
  SECTION("a checkpoint already: it is kept") {
    o.max_steps = 8;
    s.fit(o);
    const std::string before = file_bytes(path);
    const auto log_size = std::filesystem::file_size(dir.file("log.jsonl"));
    REQUIRE(before.size() > log_size + 1500);
    o.max_steps = 0;
    o.resume = true;
    fit_under(static_cast<rlim_t>(log_size + 1500));
    CHECK_THAT(error, Catch::StartsWith("Trainer: cannot save the checkpoint of step 16 (the last "
                                        "one, of step 8, is kept as it was): save_safetensors") &&
                          Catch::Contains("File too large"));
    CHECK(file_bytes(path) == before);
    CHECK(dir.entries() == std::vector<std::string>{"checkpoint.safetensors", "log.jsonl"});
  }
  const std::vector<nlohmann::json> records = read_jsonl(dir.file("log.jsonl"));
  REQUIRE(!records.empty());
  CHECK(records.back()["type"] == "stop");
  CHECK(records.back()["reason"] == "error");
  CHECK(records.back()["message"] == error);
}

// Before: a Trainer without resume, given an out_dir that held a run (a notebook cell run twice),
// overwrote that run's checkpoint at its first save. The apps refused such an --out themselves;
// the library now does too.
TEST_CASE("trainer: a fresh run never overwrites the checkpoint of an earlier run",
          "[optim][trainer]") {
  TempDir dir("trainer-no-overwrite");
  const std::string path = dir.file("checkpoint.safetensors");
  TrainerOptions o = options(dir.str());
  o.epochs = 1;
  {
    Setup s;
    s.fit(o);
  }
  const std::int64_t saved_step = read_checkpoint_info(path).step;
  const auto log_size = std::filesystem::file_size(dir.file("log.jsonl"));
  Setup again;
  CHECK_THROWS_WITH(again.fit(o),
                    Catch::Contains("'" + dir.str() + "' already holds a run (" + path + ")") &&
                        Catch::Contains("continue it with resume"));
  CHECK(again.loss.calls == 0);
  CHECK(read_checkpoint_info(path).step == saved_step);
  CHECK(std::filesystem::file_size(dir.file("log.jsonl")) == log_size);
}

// Before: a damaged task_state (the task's generators) stopped the resume with the task's own
// error, which named neither the checkpoint nor what in it was wrong. (The generator is the
// trainer's now: the dropout seeds, in trainer_state.)
TEST_CASE("trainer: resuming from a checkpoint with damaged run state names the file",
          "[optim][trainer]") {
  TempDir dir("trainer-damaged-state");
  const std::string path = dir.file("checkpoint.safetensors");
  TrainerOptions o = options(dir.str());
  o.max_steps = 4;
  o.checkpoint_every = 4;
  {
    Setup s;
    s.fit(o);
  }
  SafetensorsFile file = load_safetensors(path);
  o.max_steps = 0;
  o.resume = true;
  Setup s;
  SECTION("the dropout seeds") {
    nlohmann::json state = nlohmann::json::parse(file.metadata.at("trainer_state"));
    state["dropout_seeds"] = "xoshiro256** 1 2 3";
    file.metadata["trainer_state"] = state.dump();
    save_safetensors(path, file.tensors, file.metadata);
    CHECK_THROWS_WITH(s.fit(o),
                      Catch::StartsWith("Trainer: cannot resume from '" + path +
                                        "': its dropout seeds are damaged (generator_state_from_"
                                        "string: expected 7 fields, got 4"));
  }
  SECTION("trainer_state") {
    file.metadata["trainer_state"] = R"({"epoch": {"steps": "four"}})";
    save_safetensors(path, file.tensors, file.metadata);
    CHECK_THROWS_WITH(s.fit(o),
                      Catch::StartsWith("Trainer: cannot resume from '" + path +
                                        "': its trainer_state is damaged"));
  }
  // Before: these numbers were cast unchecked: 1e49 into an int64 is undefined behaviour, and a
  // count of -2 processes was taken as it was.
  SECTION("numbers that fit no count") {
    nlohmann::json state = nlohmann::json::parse(file.metadata.at("trainer_state"));
    std::string bad;
    SECTION("the epoch's steps") {
      state["epoch"]["steps"] = 1e49;
      bad = "the field \"steps\" is 1e+49";
    }
    SECTION("the processes") {
      state["processes"] = 1e49;
      bad = "\"processes\" is 1e+49";
    }
    SECTION("negative processes") {
      state["processes"] = -2;
      bad = "\"processes\" is -2";
    }
    file.metadata["trainer_state"] = state.dump();
    save_safetensors(path, file.tensors, file.metadata);
    CHECK_THROWS_WITH(s.fit(o), Catch::StartsWith("Trainer: cannot resume from '" + path +
                                                  "': its trainer_state is damaged") &&
                                    Catch::Contains(bad));
  }
  CHECK(s.loss.calls == 0);
}

// Before: kill -9 during a save left "checkpoint.safetensors.tmp.<pid>.<n>" behind (a whole
// checkpoint's size each), and nothing ever removed it. A run holding the directory's lock owns
// what is half-written there.
TEST_CASE("trainer: a run removes the temporaries of saves an earlier run did not finish",
          "[optim][trainer]") {
  TempDir dir("trainer-stale-tmp");
  TrainerOptions o = options(dir.str());
  o.max_steps = 8;
  {
    Setup s;
    s.fit(o);
  }
  for (const char* name : {"checkpoint.safetensors.tmp.4242.0", "checkpoint.safetensors.tmp.7.13",
                           "curves.svg.tmp.4242.0"})
    std::ofstream(dir.file(name)) << "half a checkpoint";
  // Not temporaries of a save: kept.
  for (const char* name : {"notes.tmp", "checkpoint.safetensors.tmp.x.1", "other.tmp.1.2"})
    std::ofstream(dir.file(name)) << "mine";
  o.max_steps = 16;
  o.resume = true;
  Setup s;
  s.fit(o);
  CHECK(dir.entries() == std::vector<std::string>{"checkpoint.safetensors",
                                                  "checkpoint.safetensors.tmp.x.1", "log.jsonl",
                                                  "notes.tmp", "other.tmp.1.2"});
  CHECK(remove_stale_temporaries(dir.str()).empty());
}

// Before: the log's writes were unchecked (a full disk lost records silently), and a log cut
// mid-record by a kill got the next record appended to the broken line.
TEST_CASE("trainer: log.jsonl writes are checked and a cut last line is repaired",
          "[optim][trainer]") {
  TempDir dir("trainer-log");
  const std::string log = dir.file("log.jsonl");
  SECTION("a write that fails is an error naming the log") {
    JsonlLog writer(log);
    writer.write({{"type", "start"}});
    const auto size = std::filesystem::file_size(log);
    {
      FileSizeLimit limit(static_cast<rlim_t>(size + 10));
      CHECK_THROWS_WITH(writer.write({{"type", "step"}, {"loss", 0.123456789}, {"step", 1}}),
                        Catch::Contains("cannot write to the log '" + log + "'") &&
                            Catch::Contains("File too large"));
    }
    // Before: the 10 bytes that fit stayed, a cut line; the next record followed it on that line.
    CHECK(file_bytes(log) == "{\"type\":\"start\"}\n");
    writer.write({{"type", "stop"}});
    CHECK(file_bytes(log) == "{\"type\":\"start\"}\n{\"type\":\"stop\"}\n");
  }
  SECTION("a cut last line is removed before the next record") {
    std::ofstream(log) << "{\"type\":\"start\"}\n{\"type\":\"step\",\"lo";
    {
      JsonlLog writer(log);
      CHECK_THAT(writer.note(), Catch::Contains("ended inside a record") &&
                                    Catch::Contains("removed its 18-byte incomplete last line"));
      writer.write({{"type", "resume"}});
    }
    CHECK(file_bytes(log) == "{\"type\":\"start\"}\n{\"type\":\"resume\"}\n");
    JsonlLog again(log);  // whole lines: nothing to repair
    CHECK(again.note().empty());
  }
  SECTION("a log that is one cut line") {
    std::ofstream(log) << "{\"type\":\"sta";
    JsonlLog writer(log);
    CHECK(!writer.note().empty());
    writer.write({{"type", "start"}});
    CHECK(file_bytes(log) == "{\"type\":\"start\"}\n");
  }
  SECTION("a run resumed after a cut log reads as whole records") {
    TrainerOptions o = options(dir.str());
    o.max_steps = 8;
    {
      Setup s;
      s.fit(o);
    }
    std::ofstream(log, std::ios::app) << "{\"type\":\"step\",\"step\":9,\"lo";
    o.max_steps = 16;
    o.resume = true;
    Setup s;
    s.fit(o);
    for (const nlohmann::json& r : read_jsonl(log)) CHECK(r.contains("type"));
  }
}
