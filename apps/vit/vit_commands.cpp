#include "apps/vit/vit_commands.h"

#include <cxxopts.hpp>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/common/command_line.h"
#include "apps/common/processes.h"
#include "apps/common/thread_policy.h"
#include "apps/common/training_flags.h"
#include "apps/common/training_plot.h"
#include "apps/vit/vit_training.h"
#include "apps/vit/vit_checkpoint.h"
#include "core/threads.h"
#include "data/datasets.h"
#include "optim/checkpoint.h"

namespace uwaga::apps {
namespace {

// Images per forward/backward pass in training. The fastest of 8, 12, 16, 24, 32 and 64 on
// mnist-tiny (uwaga-bench --mode train --micro-batch N, side by side): 16 computes gradients
// about 10 % faster than 32 on one thread and on two (uwaga-vit's training, which also loads
// and shifts the images, 5 %); with 8 or 12 the matrix products get too few rows.
constexpr std::int64_t kDefaultMicroBatch = 16;

using cxxopts::value;

// Applies the dataset, model, data and optimisation flags the user gave on top of a preset.
void apply_overrides(VitRunConfig& run, const cxxopts::ParseResult& r) {
  if (r.count("dataset")) set_dataset_geometry(run, r["dataset"].as<std::string>());
  auto set = [&](const char* flag, auto& field) { override_from(r, flag, field); };
  set("patch", run.model.patch);
  set("dim", run.model.dim);
  set("depth", run.model.depth);
  set("heads", run.model.heads);
  set("mlp-dim", run.model.mlp_dim);
  override_training_flags(r, run);
  set("train-size", run.train_size);
  if (r.count("train-size") && run.train_size < 1)
    fail("train: --train-size must be at least 1, got ", run.train_size);
  if (r.count("augment") && r.count("no-augment"))
    fail("train: --augment and --no-augment contradict each other");
  if (r.count("augment")) run.augment = true;
  if (r.count("no-augment")) run.augment = false;
}

void check_geometry(const ImageDataset& data, const VitRunConfig& run, const std::string& what) {
  if (data.channels != run.model.channels || data.height != run.model.image_size ||
      data.width != run.model.image_size)
    fail(what, " has images of ", data.channels, "x", data.height, "x", data.width,
         " but the model expects ", run.model.channels, "x", run.model.image_size, "x",
         run.model.image_size);
}

// `warmup`: the schedule's warm-up, which a short run cuts to its length.
void print_summary(const nn::VisionTransformer& model, const VitRunConfig& run,
                   const ImageDataset& train, const ImageDataset& test, std::int64_t warmup,
                   const optim::DataParallelOptions& parallel) {
  const auto& m = run.model;
  std::printf("uwaga-vit: %s on %s\n", run.preset.empty() ? "custom" : run.preset.c_str(),
              run.dataset.c_str());
  std::printf("  model     patch %lld, dim %lld, depth %lld, heads %lld, mlp %lld\n",
              (long long)m.patch, (long long)m.dim, (long long)m.depth, (long long)m.heads,
              (long long)m.mlp_dim);
  std::printf("  tokens    %lld patches of %lld values + 1 class token = %lld\n",
              (long long)m.num_patches(), (long long)m.patch_dim(), (long long)m.tokens());
  std::printf("  params    %lld\n", (long long)model.num_parameters());
  std::printf("  FLOPs     %.2f M per image forward, ~%.1f M per training image\n",
              m.forward_flops() / 1e6, 3 * m.forward_flops() / 1e6);
  std::printf("  data      %lld training images, %lld test images\n", (long long)train.count,
              (long long)test.count);
  std::printf("  optimiser AdamW lr %g (warm-up %lld steps, cosine to %g), weight decay %g, "
              "batch %lld, %lld epochs, label smoothing %g, augment %s\n",
              run.lr, (long long)warmup, run.min_lr, run.weight_decay,
              (long long)run.batch_size, (long long)run.epochs, run.label_smoothing,
              run.augment ? "on" : "off");
  print_replicas(parallel, "images");
  std::fflush(stdout);
}

}  // namespace

int vit_train(int argc, char** argv) {
  cxxopts::Options o("uwaga-vit train", "Train a Vision Transformer on an image dataset.");
  o.add_options()
      ("preset", "mnist-tiny, mnist-best, fashion-mnist or cifar10-small", value<std::string>()->default_value("mnist-tiny"))
      ("dataset", "mnist, fashion-mnist or cifar10 (default: the preset's)", value<std::string>())
      ("data-dir", "where the dataset's files are (default: data/cache/DATASET)", value<std::string>())
      ("out", "directory for checkpoint.safetensors and log.jsonl (required)", value<std::string>())
      ("resume", "continue from the checkpoint in --out")
      ("max-steps", "stop after this many optimizer steps in total (counting resumed ones)", value<std::int64_t>()->default_value("0"))
      ("train-size", "use only the first N training images (default: all)", value<std::int64_t>())
      ("patch", "patch size P", value<std::int64_t>())
      ("dim", "embedding width D", value<std::int64_t>())
      ("depth", "number of encoder blocks L", value<std::int64_t>())
      ("heads", "attention heads h (must divide D)", value<std::int64_t>())
      ("mlp-dim", "hidden width of the MLPs", value<std::int64_t>())
      ("augment", "random shifts (and flips for CIFAR-10 and Fashion-MNIST) while training")
      ("no-augment", "no augmentation")
      ("h,help", "show this help");
  add_training_flags(o, "images", "initialisation and shuffling");
  add_micro_batch_flag(o, kDefaultMicroBatch, "images");
  add_threads_option(o, "all cores");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "train");
  const TrainingOutput output = training_output(r);
  set_threads_from_option(r, "uwaga-vit", true);

  // Under mpirun every process builds the same run; a failure on any of them ends them all.
  const std::unique_ptr<optim::GradientReduction> processes = optim::processes_of_this_run();
  const bool root = processes->rank() == 0;
  VitRunConfig run;
  ImageDataset train, test;
  on_every_process(*processes, [&] {
    run = new_or_resumed_run(r, output, read_vit_run_config, vit_preset, apply_overrides);
    run.validate();

    const std::string dir = r.count("data-dir") ? r["data-dir"].as<std::string>()
                                                : default_data_dir(run.dataset);
    train = load_dataset(run.dataset, dir, true);
    test = load_dataset(run.dataset, dir, false);
    if (run.train_size > train.count)
      fail("train: --train-size ", run.train_size, " but ", run.dataset, " has ", train.count,
           " training images");
    if (run.train_size > 0) train = take_first(train, run.train_size);
    check_geometry(train, run, run.dataset);
    const ChannelStats stats = channel_stats(train);
    if (!output.resume) {
      run.mean = stats.mean;
      run.std = stats.std;
      run.class_names = train.class_names;
    } else if (stats.mean != run.mean || stats.std != run.std) {
      // The same images give the same statistics, bit for bit.
      fail("train: --resume: the training images in ", dir, " are not those the run was "
           "trained on (channel 0: mean ", stats.mean[0], ", std ", stats.std[0],
           "; the checkpoint's: ", run.mean[0], ", ", run.std[0], ")");
    }
  });

  optim::TrainerOptions options = trainer_options(r, output, "uwaga-vit");
  options.reduction = processes.get();
  // The run's configuration holds the training images' statistics: other data files show there.
  check_same_settings(*processes, training_settings(run.to_json(), options, test.count));
  VitTraining training(run, train, test, options);
  if (root) print_summary(training.model(), run, train, test, training.warmup(), options.parallel);
  optim::TrainSummary summary = training.fit();  // prints its own reason for stopping early
  if (summary.stopped_non_finite) return 1;
  if (summary.interrupted) return 130;
  if (!root) return 0;
  // A run cut short by --max-steps has not evaluated its last steps yet.
  const double accuracy = summary.last_eval.count("accuracy")
                              ? summary.last_eval.at("accuracy")
                              : evaluate_classifier(training.model(), test, run).accuracy();
  std::printf("test accuracy: %.2f%% (%lld images), %lld steps, %.1f s\n", 100 * accuracy,
              (long long)test.count, (long long)summary.steps, summary.seconds);
  if (std::string line = communication_summary(*processes, summary.steps, summary.seconds);
      !line.empty())
    std::printf("%s\n", line.c_str());
  // What to do next, as the user would type it (the program as they ran it).
  const std::string program = program_as_typed("uwaga-vit");
  const std::string checkpoint = shell_quoted(output.checkpoint);
  const std::string data_dir =
      r.count("data-dir") ? " --data-dir " + shell_quoted(r["data-dir"].as<std::string>()) : "";
  print_run_files(output.out,
                  {program + " eval --checkpoint " + checkpoint + data_dir,
                   program + " attention --checkpoint " + checkpoint + data_dir +
                       " --index 0 --out " + shell_quoted(output.out + "/attention.svg"),
                   program + " explore --checkpoint " + checkpoint + data_dir +
                       " --index 0 --out " + shell_quoted(output.out + "/explorer.html") +
                       "   (every layer and head, in a browser)",
                   program + " plot --run " + shell_quoted(output.out) +
                       "   (redraws the curves; more --run flags compare runs)"});
  return 0;
}

int vit_eval(int argc, char** argv) {
  cxxopts::Options o("uwaga-vit eval", "Accuracy, per-class accuracy and confusion matrix.");
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-vit train", value<std::string>())
      ("dataset", "dataset to evaluate on (default: the checkpoint's)", value<std::string>())
      ("data-dir", "where the dataset's files are (default: data/cache/DATASET)", value<std::string>())
      ("json", "print one line of JSON on stdout (accuracy, n, loss, per_class, confusion, dataset), the report on stderr")
      ("batch-size", "images per forward pass", value<std::int64_t>()->default_value("500"))
      ("h,help", "show this help");
  add_threads_option(o, "all cores");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "eval");
  if (!r.count("checkpoint")) fail("eval: --checkpoint FILE is required");
  set_threads_from_option(r, "uwaga-vit", true);
  const std::int64_t batch_size = r["batch-size"].as<std::int64_t>();
  if (batch_size < 1) fail("eval: --batch-size must be at least 1, got ", batch_size);
  LoadedVit vit = load_vit(r["checkpoint"].as<std::string>());
  std::string dataset = r.count("dataset") ? r["dataset"].as<std::string>() : vit.run.dataset;
  std::string dir =
      r.count("data-dir") ? r["data-dir"].as<std::string>() : default_data_dir(dataset);
  ImageDataset test = load_dataset(dataset, dir, false);
  check_geometry(test, vit.run, dataset);
  ClassifierEval e =
      evaluate_classifier(*vit.model, test, vit.run, batch_size);

  // With --json, stdout holds only the JSON (for programs); the report goes to stderr.
  std::FILE* report = r.count("json") ? stderr : stdout;

  std::fprintf(report, "%s test set: accuracy %.2f%% (%lld of %lld), loss %.4f\n", dataset.c_str(),
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
                        {"dataset", dataset},       {"per_class", per_class}, {"confusion", e.confusion}};
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}

int vit_plot(int argc, char** argv) { return plot_training_runs("uwaga-vit", argc, argv); }

}  // namespace uwaga::apps
