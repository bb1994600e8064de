#include "apps/vit/vit_commands.h"

#include <cxxopts.hpp>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/common/command_line.h"
#include "apps/common/memory_budget.h"
#include "apps/common/thread_policy.h"
#include "apps/common/run_summary.h"
#include "apps/common/train_command.h"
#include "apps/common/training_flags.h"
#include "apps/common/training_plot.h"
#include "apps/vit/vit_training.h"
#include "apps/vit/vit_checkpoint.h"
#include "apps/vit/vit_data_flags.h"
#include "apps/vit/vit_recipe.h"
#include "core/threads.h"
#include "data/datasets.h"
#include "optim/checkpoint.h"

namespace uwaga::apps {
namespace {

using cxxopts::value;

// Applies the dataset, model, data and optimisation flags the user gave on top of a preset.
void apply_overrides(VitRunConfig& run, const cxxopts::ParseResult& r) {
  if (r.count("dataset")) set_dataset_geometry(run, r["dataset"].as<std::string>());
  auto set = [&](const char* flag, auto& field) { override_from(r, flag, field); };
  set("patch", run.model.patch);
  set("dim", run.model.dim);
  set("layers", run.model.depth);
  set("heads", run.model.heads);
  set("mlp-dim", run.model.mlp_dim);
  set("stem", run.model.stem);
  set("pool", run.model.pool);
  set("cct-details", run.model.cct_details);
  override_training_flags(r, run);
  set("train-size", run.train_size);
  if (r.count("train-size") && run.train_size < 1)
    fail("train: --train-size must be at least 1, got ", run.train_size);
  if (r.count("augment") && r.count("no-augment"))
    fail("train: --augment and --no-augment contradict each other");
  if (r.count("augment")) run.augment = true;
  if (r.count("no-augment")) run.augment = false;
  apply_recipe_flags(run, r);
}

void check_geometry(const ImageDataset& data, const VitRunConfig& run, const std::string& what) {
  if (data.channels != run.model.channels || data.height != run.model.image_size ||
      data.width != run.model.image_size)
    fail(what, " has images of ", data.channels, "x", data.height, "x", data.width,
         " but the model expects ", run.model.channels, "x", run.model.image_size, "x",
         run.model.image_size);
}

// uwaga-vit's part of `train` (apps/common/train_command.h): a ViT on an image dataset.
class VitTrain : public TrainProgram {
 public:
  TrainModeText text() const override {
    return {.program = "uwaga-vit",
            .description = "Train a Vision Transformer on an image dataset.",
            .presets = vit_preset_list(),
            .default_preset = "mnist-tiny",
            .examples = "images",
            .seeded = "initialisation and shuffling",
            .micro_batch = kVitMicroBatch,
            .micro_batch_items = "images"};
  }

  void add_flags(cxxopts::Options& o) const override {
    add_vit_data_flags(o, "the preset's");
    o.add_options()
        ("train-size", "use only the first N training images (default: all)", value<std::int64_t>())
        ("patch", "patch size P", value<std::int64_t>())
        ("dim", "embedding width D", value<std::int64_t>())
        ("layers", "number of encoder blocks L", value<std::int64_t>())
        ("heads", "attention heads h (must divide D)", value<std::int64_t>())
        ("mlp-dim", "hidden width of the MLPs", value<std::int64_t>())
        ("stem", "how patches become tokens: patch (a Linear on each P×P patch), conv (log2 P "
                 "3×3 stride-2 convolutions with ReLU, then a Linear; P a power of 2) or cct "
                 "(log2 P 3×3 convolutions, each with ReLU and a 3×3 stride-2 max pooling, then "
                 "a Linear: CCT's tokenizer)",
         value<std::string>())
        ("pool", "what the head reads: cls (a class token's state) or seq (sequence pooling: a "
                 "learned softmax-weighted mean of every token's state, CCT's SeqPool)",
         value<std::string>())
        ("cct-details", "with --stem cct --pool seq: CCT's own model, as their code (no Linear "
                        "after the tokenizer, no qkv bias, LayerNorm between each block's "
                        "branches, CCT's init); --cct-details=false: uwaga's")
        ("augment", "random shifts (and flips for CIFAR-10 and Fashion-MNIST) while training")
        ("no-augment", "no augmentation");
    add_recipe_flags(o);
  }

  RunSettings set_up(const cxxopts::ParseResult& r, const TrainingOutput& output) override {
    run_ = new_or_resumed_run(r, output, read_vit_run_config, vit_preset, apply_overrides);
    run_.model.attention = attention_path(r);
    run_.validate();
    const nn::VitConfig& m = run_.model;
    const double d = static_cast<double>(m.dim);
    check_training_fits({declared_parameter_count<nn::VisionTransformer>(m),
                         double(run_.batch_size), double(m.tokens()), d, double(m.depth),
                         double(m.heads), double(m.mlp_dim)},
                        "--dim, --layers, --mlp-dim, --patch or --batch-size");
    const std::string dir = vit_data(r, run_.dataset).dir;
    train_ = load_dataset(run_.dataset, dir, true);
    test_ = load_dataset(run_.dataset, dir, false);
    if (run_.train_size > train_.count)
      fail("train: --train-size ", run_.train_size, " but ", run_.dataset, " has ", train_.count,
           " training images");
    if (run_.train_size > 0) train_ = take_first(train_, run_.train_size);
    check_geometry(train_, run_, run_.dataset);
    const ChannelStats stats = channel_stats(train_);
    if (!output.resume) {
      run_.mean = stats.mean;
      run_.std = stats.std;
      run_.class_names = train_.class_names;
    } else if (stats.mean != run_.mean || stats.std != run_.std) {
      // The same images give the same statistics, bit for bit.
      fail("train: --resume: the training images in ", dir, " are not those the run was "
           "trained on (channel 0: mean ", stats.mean[0], ", std ", stats.std[0],
           "; the checkpoint's: ", run_.mean[0], ", ", run_.std[0], ")");
    }
    // The run's configuration holds the training images' statistics: other data files show there.
    return {run_.to_json(), test_.count};
  }

  void start(optim::TrainerOptions options) override {
    training_ = std::make_unique<VitTraining>(run_, train_, test_, std::move(options));
  }

  void print_summary(const optim::DataParallelOptions& parallel) override {
    const auto& m = run_.model;
    const RunSummary summary(text());
    summary.heading(run_.preset, " on " + run_.dataset);
    summary.line("model", "patch %lld, dim %lld, depth %lld, heads %lld, mlp %lld%s",
                 (long long)m.patch, (long long)m.dim, (long long)m.depth, (long long)m.heads,
                 (long long)m.mlp_dim,
                 m.stem == "patch"  ? ""
                 : m.stem == "conv" ? ", conv stem"
                 : m.cct_details    ? ", cct stem, CCT's details (no Linear after it, no qkv "
                                      "bias, LN between the branches, CCT's init)"
                                    : ", cct stem");
    const char* pooled = m.class_token() ? " + 1 class token" : " (sequence pooling)";
    if (m.stem != "patch")
      summary.line("tokens", "%lld grid cells of the stem's %lld channels%s = %lld",
                   (long long)m.num_patches(), (long long)m.backbone().embed_in(), pooled,
                   (long long)m.tokens());
    else
      summary.line("tokens", "%lld patches of %lld values%s = %lld", (long long)m.num_patches(),
                   (long long)m.patch_dim(), pooled, (long long)m.tokens());
    summary.line("params", "%lld", (long long)training_->model().num_parameters());
    summary.line("FLOPs", "%.2f M per image forward, ~%.1f M per training image",
                 m.forward_flops() / 1e6, 3 * m.forward_flops() / 1e6);
    summary.line("data", "%lld training images, %lld test images", (long long)train_.count,
                 (long long)test_.count);
    summary.optimiser(run_, *training_);
    summary.line("recipe", "%s", describe_recipe(run_).c_str());
    summary.threads(parallel);
  }

  optim::TrainSummary fit() override { return training_->fit(); }

  void print_result(const optim::TrainSummary& summary) override {
    // A run cut short by --max-steps has not evaluated its last steps yet.
    const double accuracy =
        summary.last_eval.count("accuracy")
            ? summary.last_eval.at("accuracy")
            : evaluate_classifier(training_->model(), test_, run_).accuracy();
    std::printf("test accuracy: %.2f%% (%lld images), %lld steps, %.1f s\n", 100 * accuracy,
                (long long)test_.count, (long long)summary.steps, summary.seconds);
  }

  std::vector<std::string> next_commands(const cxxopts::ParseResult& r, const std::string& program,
                                         const TrainingOutput& output,
                                         const std::string& checkpoint) const override {
    const std::string data_dir =
        r.count("data-dir") ? " --data-dir " + shell_quoted(r["data-dir"].as<std::string>()) : "";
    return {program + " eval --checkpoint " + checkpoint + data_dir,
            program + " attention --checkpoint " + checkpoint + data_dir + " --index 0 --out " +
                shell_quoted(output.out + "/attention.svg"),
            program + " explore --checkpoint " + checkpoint + data_dir + " --index 0 --out " +
                shell_quoted(output.out + "/explorer.html") +
                "   (every layer and head, in a browser)",
            program + " plot --run " + shell_quoted(output.out) +
                "   (redraws the curves; more --run flags compare runs)"};
  }

 private:
  VitRunConfig run_;
  ImageDataset train_, test_;
  std::unique_ptr<VitTraining> training_;
};

}  // namespace

int vit_train(int argc, char** argv) {
  VitTrain program;
  return train_command(program, argc, argv);
}

int vit_eval(int argc, char** argv) {
  cxxopts::Options o("uwaga-vit eval", "Accuracy, per-class accuracy and confusion matrix.");
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-vit train", value<std::string>())
      ("json", "print one line of JSON on stdout (accuracy, n, loss, per_class, confusion, dataset), the report on stderr")
      ("batch-size", "images per forward pass", value<std::int64_t>()->default_value("500"))
      ("tta", "test-time augmentation: flip (each image's logits averaged with its mirror "
              "image's; twice the forward passes) or none", value<std::string>()->default_value("none"))
      ("h,help", "show this help");
  add_vit_data_flags(o, "the checkpoint's");
  add_threads_option(o, "all cores");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "eval");
  if (!r.count("checkpoint")) fail("eval: --checkpoint FILE is required");
  set_threads_from_option(r, "uwaga-vit", true);
  const std::int64_t batch_size = r["batch-size"].as<std::int64_t>();
  if (batch_size < 1) fail("eval: --batch-size must be at least 1, got ", batch_size);
  const std::string tta = r["tta"].as<std::string>();
  if (tta != "none" && tta != "flip") fail("eval: --tta must be none or flip, got '", tta, "'");
  LoadedVit vit = load_vit(r["checkpoint"].as<std::string>());
  const auto [dataset, dir] = vit_data(r, vit.run.dataset);
  ImageDataset test = load_dataset(dataset, dir, false);
  check_geometry(test, vit.run, dataset);
  ClassifierEval e =
      evaluate_classifier(*vit.model, test, vit.run, batch_size, tta == "flip");

  // With --json, stdout holds only the JSON (for programs); the report goes to stderr.
  std::FILE* report = r.count("json") ? stderr : stdout;

  std::fprintf(report, "%s test set%s: accuracy %.2f%% (%lld of %lld), loss %.4f\n",
               dataset.c_str(), tta == "flip" ? ", each image averaged with its mirror image" : "",
               100 * e.accuracy(), (long long)e.correct, (long long)e.n, e.loss);
  std::fprintf(report, "per class:\n");
  nlohmann::json per_class = nlohmann::json::array();
  for (std::size_t c = 0; c < e.confusion.size(); ++c) {
    std::int64_t total = 0;
    for (auto v : e.confusion[c]) total += v;
    double acc = total ? static_cast<double>(e.confusion[c][c]) / total : 0.0;
    per_class.push_back(acc);
    std::string name = c < test.class_names.size() ? test.class_names[c] : std::to_string(c);
    std::fprintf(report, "  %2zu %-12s %6.2f%% of %lld\n", c, name.c_str(), 100 * acc, (long long)total);
  }
  std::fprintf(report, "confusion matrix (rows: true class, columns: predicted):\n     ");
  for (std::size_t c = 0; c < e.confusion.size(); ++c) std::fprintf(report, "%6zu", c);
  std::fprintf(report, "\n");
  for (std::size_t t = 0; t < e.confusion.size(); ++t) {
    std::fprintf(report, "  %2zu ", t);
    for (auto v : e.confusion[t]) std::fprintf(report, "%6lld", (long long)v);
    std::fprintf(report, "\n");
  }
  if (r.count("json")) {
    nlohmann::json j = {{"accuracy", e.accuracy()}, {"n", e.n},           {"loss", e.loss},
                        {"dataset", dataset},       {"per_class", per_class}, {"confusion", e.confusion},
                        {"tta", tta}};
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}

int vit_plot(int argc, char** argv) { return plot_training_runs("uwaga-vit", argc, argv); }

}  // namespace uwaga::apps
