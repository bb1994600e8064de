#include "apps/pose/pose_commands.h"

#include <cxxopts.hpp>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/common/command_line.h"
#include "apps/common/memory_budget.h"
#include "apps/common/run_path.h"
#include "apps/common/run_summary.h"
#include "apps/common/train_command.h"
#include "apps/common/training_flags.h"
#include "apps/common/training_plot.h"
#include "apps/pose/pose_checkpoint.h"
#include "apps/pose/pose_training.h"

namespace uwaga::apps {
namespace {

using cxxopts::value;

// Applies the data, model, target and optimisation flags the user gave on top of a preset.
void apply_overrides(PoseRunConfig& run, const cxxopts::ParseResult& r) {
  if (r.count("dataset")) set_pose_data(run, r["dataset"].as<std::string>());
  apply_pose_data_flags(r, run);
  auto set = [&](const char* flag, auto& field) { override_from(r, flag, field); };
  set("image-height", run.model.image_height);
  set("image-width", run.model.image_width);
  set("patch", run.model.patch);
  set("dim", run.model.dim);
  set("layers", run.model.depth);
  set("heads", run.model.heads);
  set("mlp-dim", run.model.mlp_dim);
  set("decoder", run.model.decoder);
  set("decoder-channels", run.model.decoder_channels);
  override_training_flags(r, run);
  set("train-size", run.train_size);
  set("valid-size", run.valid_size);
  set("sigma", run.sigma);
  if (r.count("flip") && r.count("no-flip"))
    fail("train: --flip and --no-flip contradict each other");
  if (r.count("flip") && run.data == "synthetic")
    fail("train: --flip with stick figures: their grey levels tell left from right (left limbs "
         "bright, right ones dark), so a mirror image with its joints swapped would call the "
         "bright limbs right; stick-figure runs train unmirrored (data/pose/stick_figures.h)");
  if (r.count("flip")) run.flip = true;
  if (r.count("no-flip")) run.flip = false;
}

// A joint worth looking at in the attention picture: a wrist, which the model finds from the
// arm it hangs on.
std::string example_joint(const SkeletonSpec& skeleton) {
  for (const std::string& name : skeleton.joint_names)
    if (name.find("wrist") != std::string::npos) return name;
  return skeleton.joint_names.at(0);
}

nlohmann::json scores_json(const KeypointScores& s) {
  return {{"pck", s.pck}, {"ap", s.oks.ap}, {"ap50", s.oks.ap50}, {"ap75", s.oks.ap75},
          {"ar", s.oks.ar}, {"pck_per_joint", s.pck_joint}};
}

void print_scores(std::FILE* out, const char* name, const KeypointScores& s) {
  std::fprintf(out, "  %-16s %7.2f%%  %6.3f %6.3f %6.3f\n", name, 100 * s.pck, s.oks.ap,
               s.oks.ap50, s.oks.ap75);
}

// The run a --resume continues. Before runs recorded absolute paths, a relative one was read from
// the directory train ran in: it is made absolute from this one, as it would be read from here,
// so that repeating the flag as typed is the same setting.
PoseRunConfig read_pose_run_to_resume(const std::string& checkpoint) {
  PoseRunConfig run = read_pose_run_config(checkpoint);
  for (std::string* path : {&run.coco_annotations, &run.coco_images})
    if (!path->empty() && path->front() != '/') *path = path_for_run("the run's path", *path);
  return run;
}

// uwaga-pose's part of `train` (apps/common/train_command.h): a ViTPose keypoint model.
class PoseTrain : public TrainProgram {
 public:
  TrainModeText text() const override {
    return {.program = "uwaga-pose",
            .description = "Train a ViTPose keypoint model on stick figures or COCO keypoints.",
            .presets = "stick-classic, stick-simple, coco-small or smoke",
            .default_preset = "stick-classic",
            .examples = "samples",
            .seeded = "initialisation, training samples, order and flips",
            .label_smoothing = false,
            .micro_batch = kPoseMicroBatch,
            .micro_batch_items = "images"};
  }

  void add_flags(cxxopts::Options& o) const override {
    o.add_options()("dataset", "synthetic (stick figures made on the fly) or coco (default: the "
                               "preset's)", value<std::string>());
    add_pose_data_flags(o, "the preset's");
    o.add_options()
        ("decoder", "classic (2 transposed convolutions) or simple (bilinear x4, 3x3 conv)", value<std::string>())
        ("decoder-channels", "the classic decoder's width", value<std::int64_t>())
        ("image-height", "input height H", value<std::int64_t>())
        ("image-width", "input width W", value<std::int64_t>())
        ("patch", "patch size P (heatmaps at stride P/4)", value<std::int64_t>())
        ("dim", "embedding width D", value<std::int64_t>())
        ("layers", "number of encoder blocks L", value<std::int64_t>())
        ("heads", "attention heads h (must divide D)", value<std::int64_t>())
        ("mlp-dim", "hidden width of the MLPs", value<std::int64_t>())
        ("train-size", "training samples per epoch (synthetic: new ones each epoch; coco: 0 for all)", value<std::int64_t>())
        ("valid-size", "validation samples (coco: the last N persons of the file)", value<std::int64_t>())
        ("sigma", "the target Gaussians' sigma, in heatmap cells", value<double>())
        ("flip", "mirror half the training samples, left and right joints swapped (COCO's default)")
        ("no-flip", "no mirroring (the stick figures' only choice)");
  }

  RunSettings set_up(const cxxopts::ParseResult& r, const TrainingOutput& output) override {
    run_ = new_or_resumed_run(r, output, read_pose_run_to_resume, pose_preset, apply_overrides);
    run_.model.attention = attention_path(r);
    run_.validate();
    const nn::PoseConfig& m = run_.model;
    const double d = static_cast<double>(m.dim), tokens = double(m.grid_height() * m.grid_width());
    check_training_fits({declared_parameter_count<nn::VitPose>(m), double(run_.batch_size),
                         tokens, d, double(m.depth), double(m.heads), double(m.mlp_dim)},
                        "--dim, --layers, --mlp-dim or --batch-size");
    data_ = std::make_unique<PoseData>(run_);
    return {run_.to_json(), data_->valid.size};
  }

  void start(optim::TrainerOptions options) override {
    training_ = std::make_unique<PoseTraining>(run_, *data_, std::move(options));
  }

  void print_summary(const optim::DataParallelOptions& parallel) override {
    const nn::PoseConfig& m = run_.model;
    const RunSummary summary(text());
    summary.heading(run_.preset, ", " + m.decoder + " decoder");
    summary.line("model", "%lldx%lld input, %lld channel(s), patch %lld: %lldx%lld = %lld tokens, "
                 "dim %lld, depth %lld, heads %lld, mlp %lld",
                 (long long)m.image_height, (long long)m.image_width, (long long)m.channels,
                 (long long)m.patch, (long long)m.grid_height(), (long long)m.grid_width(),
                 (long long)(m.grid_height() * m.grid_width()), (long long)m.dim,
                 (long long)m.depth, (long long)m.heads, (long long)m.mlp_dim);
    const std::string decoder =
        m.decoder == "simple"
            ? "simple: ReLU, bilinear x4, 3x3 conv"
            : "classic: 2 x (4x4 transposed conv stride 2, BatchNorm, ReLU), " +
                  std::to_string(m.decoder_channels) + " channels, 1x1 conv";
    summary.line("decoder", "%s -> %lld heatmaps of %lldx%lld (stride %g px), Gaussians of sigma "
                 "%g cells", decoder.c_str(), (long long)m.joints, (long long)m.heatmap_height(),
                 (long long)m.heatmap_width(), m.heatmap_stride(), run_.sigma);
    summary.line("params", "%lld", (long long)training_->model().num_parameters());
    summary.line("FLOPs", "%.1f M per image forward, ~%.0f M per training image",
                 m.forward_flops() / 1e6, 3 * m.forward_flops() / 1e6);
    summary.line("data", "%s; flip %s", data_->describe().c_str(), run_.flip ? "on" : "off");
    summary.optimiser(run_, *training_);
    summary.threads(parallel);
  }

  optim::TrainSummary fit() override { return training_->fit(); }

  void print_result(const optim::TrainSummary& summary) override {
    // A run cut short by --max-steps has not evaluated its last steps yet.
    std::map<std::string, double> last = summary.last_eval;
    if (!last.count("pck")) {
      const PoseEval e = evaluate_pose(training_->model(), data_->valid, heatmap_targets(run_));
      last = {{"pck", e.model.pck}, {"ap", e.model.oks.ap}};
    }
    std::printf("validation: PCK@0.1 %.2f%%, OKS-AP %.3f (%lld samples); %lld steps, %.1f s\n",
                100 * last.at("pck"), last.at("ap"), (long long)data_->valid.size,
                (long long)summary.steps, summary.seconds);
  }

  std::vector<std::string> next_commands(const cxxopts::ParseResult&, const std::string& program,
                                         const TrainingOutput& output,
                                         const std::string& checkpoint) const override {
    return {program + " eval --checkpoint " + checkpoint,
            program + " predict --checkpoint " + checkpoint + " --index 0 --out " +
                shell_quoted(output.out + "/predict.svg"),
            program + " attention --checkpoint " + checkpoint + " --index 0 --joint " +
                example_joint(pose_skeleton(run_)) + " --out " +
                shell_quoted(output.out + "/attention.svg"),
            program + " plot --run " + shell_quoted(output.out) +
                "   (redraws the curves; more --run flags compare runs)"};
  }

 private:
  PoseRunConfig run_;
  std::unique_ptr<PoseData> data_;
  std::unique_ptr<PoseTraining> training_;
};

}  // namespace

void add_pose_data_flags(cxxopts::Options& o, const std::string& default_place) {
  o.add_options()("coco-annotations", "COCO person_keypoints_*.json (--dataset coco; default: " +
                                          default_place + ")", value<std::string>());
  add_data_dir_flag(o, "the directory of its photos (--dataset coco; default: " + default_place + ")");
}

void apply_pose_data_flags(const cxxopts::ParseResult& r, PoseRunConfig& run) {
  if (run.data != "coco" && (r.count("coco-annotations") || r.count("data-dir")))
    fail("--dataset ", run.data, " draws its own figures: --coco-annotations and --data-dir are "
         "for --dataset coco");
  // As absolute paths: a resume from another directory finds them, and the same file named
  // another way is the same setting.
  if (r.count("coco-annotations"))
    run.coco_annotations =
        path_for_run("--coco-annotations", r["coco-annotations"].as<std::string>());
  if (r.count("data-dir"))
    run.coco_images = path_for_run("--data-dir", r["data-dir"].as<std::string>());
}

int pose_train(int argc, char** argv) {
  PoseTrain program;
  return train_command(program, argc, argv);
}

int pose_eval(int argc, char** argv) {
  cxxopts::Options o("uwaga-pose eval",
                     "PCK@0.1 and OKS-AP of a checkpoint on its validation samples, beside the "
                     "mean-pose and brightest-pixel baselines.");
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-pose train", value<std::string>())
      ("valid-size", "evaluate on this many validation samples (default: the run's)", value<std::int64_t>())
      ("json", "print one line of JSON on stdout (n, loss, and pck, ap, ap50, ap75, ar, pck_per_joint for the model and each baseline), the report on stderr")
      ("h,help", "show this help");
  add_pose_data_flags(o, "where the run found them");
  add_threads_option(o, "all cores");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "eval");
  if (!r.count("checkpoint")) fail("eval: --checkpoint FILE is required");
  set_threads_from_option(r, "uwaga-pose", true);
  LoadedPose pose = load_pose(r["checkpoint"].as<std::string>());
  override_from(r, "valid-size", pose.run.valid_size);
  apply_pose_data_flags(r, pose.run);
  // The limits train has (--valid-size: a million stick figures, drawn up front), for the flags'
  // values as for the checkpoint's: 10^9 figures ran for hours.
  pose.run.validate();
  const PoseData data(pose.run);
  const PoseEval e = evaluate_pose(*pose.model, data.valid, heatmap_targets(pose.run), &data.train);

  // With --json, stdout holds only the JSON (for programs); the report goes to stderr.
  std::FILE* report = r.count("json") ? stderr : stdout;
  std::fprintf(report, "validation: %s; %lld samples, heatmap loss %.6f\n",
               data.describe().c_str(), (long long)e.n, e.loss);
  std::fprintf(report, "  %-16s %8s  %6s %6s %6s\n", "", "PCK@0.1", "AP", "AP50", "AP75");
  print_scores(report, "model", e.model);
  print_scores(report, "mean pose", e.mean_pose);
  print_scores(report, "brightest pixel", e.brightest_pixel);
  const SkeletonSpec& skeleton = pose_skeleton(pose.run);
  std::fprintf(report, "the model's PCK@0.1 per joint:\n");
  for (std::size_t k = 0; k < e.model.pck_joint.size(); ++k)
    std::fprintf(report, "  %-16s %7.2f%%\n", skeleton.joint_names[k].c_str(),
                 100 * e.model.pck_joint[k]);
  if (r.count("json")) {
    const nlohmann::json j = {{"n", e.n},
                              {"loss", e.loss},
                              {"model", scores_json(e.model)},
                              {"mean_pose", scores_json(e.mean_pose)},
                              {"brightest_pixel", scores_json(e.brightest_pixel)}};
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}

int pose_plot(int argc, char** argv) { return plot_training_runs("uwaga-pose", argc, argv); }

}  // namespace uwaga::apps
