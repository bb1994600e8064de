#pragma once
// Training curves from a run's log.jsonl (optim/trainer.h lists its records): loss and accuracy
// (training, from the step records; the evaluation split, from the epoch records), learning rate
// and gradient norm against the step, several runs on one chart. The `plot` mode of uwaga-vit and
// uwaga-translate:
//   uwaga-vit plot --run runs/a [--run runs/b ...] [--out curves.svg] [--no-png]
// writes an SVG, and a PNG beside it when rsvg-convert or ImageMagick's convert is installed.
#include <string>
#include <utility>
#include <vector>

namespace uwaga::apps {

// (step, value) pairs in step order.
using Curve = std::vector<std::pair<double, double>>;

struct TrainingLog {
  std::string label;  // the run's name in the legend: its directory
  std::string path;   // the log file read
  // From the step records (means since the previous one).
  Curve train_loss, train_accuracy, lr, grad_norm;
  // From the epoch records: "<split>_loss" and "<split>_accuracy" (the translator's
  // "<split>_token_accuracy" when there is no plain accuracy, uwaga-pose's "<split>_pck").
  Curve eval_loss, eval_accuracy;
  std::string eval_split;          // "test", "valid"; empty when no epoch was evaluated
  std::string eval_accuracy_name;  // "accuracy", "token_accuracy" or "pck"
  std::string stop_reason;         // the last stop record's reason; empty when the log just ends
  // The epoch records' "train_loss", "train_accuracy" and "lr": the training curves of a run
  // shorter than --log-every, which logged no step (one point per epoch).
  Curve epoch_train_loss, epoch_train_accuracy, epoch_lr;
  // Values (or steps) beyond float's range, left out of the curves: no training logs them, and
  // they overflow a panel's scale.
  std::int64_t out_of_range = 0;
};

// A run directory as the user gave it, without trailing slashes ("runs/a/" is "runs/a").
std::string run_directory(const std::string& run);

// Reads `run`, a run directory or its log.jsonl. Only the last run in the file counts (a "start"
// record begins again), and a resume drops the steps logged after the checkpoint it went back to.
// Without step records the training curves come from the epoch records. Fails naming the file
// when it is missing, empty, not JSON lines, or holds neither a step nor an epoch record.
TrainingLog read_training_log(const std::string& run);

// A 2 × 2 chart (loss, accuracy, learning rate, gradient norm against the step), one colour per
// run with a legend: training as a solid path, evaluation as a dashed line through dots. Each
// panel is a <g id="panel-NAME"> holding one <path> per run that has that curve.
std::string training_plot_svg(const std::vector<TrainingLog>& runs);

// Converts the SVG to PNG with rsvg-convert, else ImageMagick's convert; returns the converter's
// name, or "" when neither is installed or the conversion failed (no PNG then).
std::string svg_to_png(const std::string& svg_path, const std::string& png_path);

// The `plot` mode: argv[0] is the mode, `program` names the program in messages.
int plot_training_runs(const char* program, int argc, char** argv);

}  // namespace uwaga::apps
