#include "apps/common/training_plot.h"

#include <sys/stat.h>

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "apps/common/command_line.h"
#include "apps/common/printable_text.h"
#include "apps/common/svg_canvas.h"
#include "apps/common/training_flags.h"
#include "core/error.h"
#include "core/regular_file.h"

namespace uwaga::apps {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A record's field as a finite number, if it is one (a NaN loss is logged as null).
std::optional<double> number(const json& record, const std::string& key) {
  auto it = record.find(key);
  if (it == record.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

// Beyond float's range, where no training's numbers lie: a panel spanning ±1e308 overflowed its
// scale and wrote "-nan" into the SVG. Such points are left out, and counted to say so.
constexpr double kMaxPlotted = 3.5e38;

void add(TrainingLog& log, Curve& curve, const json& record, double step, const std::string& key) {
  const std::optional<double> v = number(record, key);
  if (!v) return;
  if (std::abs(*v) > kMaxPlotted || std::abs(step) > kMaxPlotted) {
    ++log.out_of_range;
    return;
  }
  curve.emplace_back(step, *v);
}

// Drops the points after `step` (a resume went back to the checkpoint of that step).
void cut_after(Curve& curve, double step) {
  curve.erase(std::remove_if(curve.begin(), curve.end(),
                             [&](const auto& p) { return p.first > step; }),
              curve.end());
}

// The evaluation split of an epoch record: "test" for "test_loss" (not "train_loss").
std::string eval_split_of(const json& record) {
  for (const auto& [key, value] : record.items()) {
    const std::size_t end = key.rfind("_loss");
    if (end == std::string::npos || end + 5 != key.size() || key == "train_loss") continue;
    return key.substr(0, end);
  }
  return "";
}

void read_record(TrainingLog& log, const json& r) {
  const std::string type = r.at("type").get<std::string>();
  const double step = number(r, "step").value_or(0);
  if (type == "start") {
    TrainingLog fresh;  // an earlier run's records (one that never saved) come before this one
    fresh.label = log.label;
    fresh.path = log.path;
    log = std::move(fresh);
  } else if (type == "resume") {
    for (Curve* c : {&log.train_loss, &log.train_accuracy, &log.lr, &log.grad_norm,
                     &log.eval_loss, &log.eval_accuracy, &log.epoch_train_loss,
                     &log.epoch_train_accuracy, &log.epoch_lr})
      cut_after(*c, step);
    log.stop_reason.clear();
  } else if (type == "step") {
    add(log, log.train_loss, r, step, "loss");
    add(log, log.train_accuracy, r, step, "accuracy");
    add(log, log.lr, r, step, "lr");
    add(log, log.grad_norm, r, step, "grad_norm");
  } else if (type == "epoch") {
    add(log, log.epoch_train_loss, r, step, "train_loss");
    add(log, log.epoch_train_accuracy, r, step, "train_accuracy");
    add(log, log.epoch_lr, r, step, "lr");
    const std::string split = eval_split_of(r);
    if (split.empty()) return;
    log.eval_split = split;
    add(log, log.eval_loss, r, step, split + "_loss");
    // The translator logs no plain accuracy but a token accuracy, uwaga-pose PCK.
    const char* name = r.contains(split + "_accuracy")         ? "accuracy"
                       : r.contains(split + "_token_accuracy") ? "token_accuracy"
                       : r.contains(split + "_pck")            ? "pck"
                                                               : "";
    log.eval_accuracy_name = name;
    add(log, log.eval_accuracy, r, step, split + "_" + name);
  } else if (type == "stop") {
    log.stop_reason = r.value("reason", std::string("?"));
  }
}

// ---- drawing ----

// tab10's first colours: distinct, and legible on white.
const Rgb kColours[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},
                        {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127},
                        {188, 189, 34},  {23, 190, 207}};
const Rgb kInk = {40, 40, 40}, kGrid = {225, 225, 225};

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", std::abs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

// An axis from `lo` to `hi` in steps of 1, 2 or 5 times a power of ten, about five ticks.
struct Axis {
  double lo = 0, hi = 1, tick = 0.2;
};

Axis nice_axis(double lo, double hi) {
  if (!(hi > lo)) {  // one value (or none): a band around it
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / 5;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double tick = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) {
      tick = m * power;
      break;
    }
  return {std::floor(lo / tick) * tick, std::ceil(hi / tick) * tick, tick};
}

struct Series {
  const Curve* curve;
  Rgb colour;
  bool eval;  // dashed through dots
};

// One panel: axes, grid, tick labels, the series. Training series are <path>s (one per run),
// evaluation series <polyline>s with dots.
void draw_panel(SvgCanvas& svg, const std::string& id, const std::string& title, double x,
                double y, double w, double h, const Axis& xs, const std::vector<Series>& series,
                bool zero_based) {
  double lo = INFINITY, hi = -INFINITY;
  for (const Series& s : series)
    for (const auto& [step, v] : *s.curve) lo = std::min(lo, v), hi = std::max(hi, v);
  svg.begin_group("panel-" + id);
  svg.text(x + w / 2, y - 10, title, 13, "middle");
  if (!std::isfinite(lo)) {
    svg.rect(x, y, w, h, {248, 248, 248});
    svg.text(x + w / 2, y + h / 2, "no data in the log", 12, "middle");
    svg.end_group();
    return;
  }
  if (zero_based && lo > 0) lo = 0;
  const Axis ys = nice_axis(lo, hi);
  auto px = [&](double step) { return x + (step - xs.lo) / (xs.hi - xs.lo) * w; };
  auto py = [&](double v) { return y + h - (v - ys.lo) / (ys.hi - ys.lo) * h; };
  for (double t = ys.lo; t <= ys.hi + ys.tick / 2; t += ys.tick) {
    svg.line(x, py(t), x + w, py(t), kGrid);
    svg.text(x - 6, py(t) + 4, number_text(t), 10, "end");
  }
  for (double t = xs.lo; t <= xs.hi + xs.tick / 2; t += xs.tick) {
    svg.line(px(t), y + h, px(t), y + h + 4, kInk);
    svg.text(px(t), y + h + 16, number_text(t), 10, "middle");
  }
  svg.line(x, y + h, x + w, y + h, kInk);
  svg.line(x, y, x, y + h, kInk);
  svg.text(x + w / 2, y + h + 32, "step", 11, "middle");
  for (const Series& s : series) {
    std::vector<std::pair<double, double>> points;
    for (const auto& [step, v] : *s.curve) points.emplace_back(px(step), py(v));
    if (s.eval) {
      svg.polyline(points, s.colour, 1.5, "6 3");
      for (const auto& [cx, cy] : points) svg.circle(cx, cy, 3, s.colour);
    } else {
      svg.path(points, s.colour, 1.5);
    }
  }
  svg.end_group();
}

bool on_path(const char* tool) {
  return std::system(("command -v " + std::string(tool) + " >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace

std::string run_directory(const std::string& run) {
  std::string dir = run;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// A log of a year of steps is a few hundred MB at most; anything larger is not one.
constexpr std::uint64_t kMaxLogBytes = std::uint64_t{1} << 30;

TrainingLog read_training_log(const std::string& run) {
  TrainingLog log;
  const bool is_file = fs::is_regular_file(run);
  log.path = is_file ? run : run_directory(run) + "/log.jsonl";
  log.label = is_file ? fs::path(run).parent_path().string() : run_directory(run);
  if (log.label.empty()) log.label = ".";
  // A FIFO, a device, a socket: neither a run directory nor a log, and no "no log at it/log.jsonl".
  struct stat st;
  if (!is_file && ::stat(run.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    fail("plot: ", run, " is ", file_kind(st.st_mode), ", not a run directory or its log.jsonl");
  if (!fs::exists(log.path))
    fail("plot: ", fs::exists(run) ? "no log at " + log.path : run + " does not exist",
         fs::is_directory(run) ? " (is it a run directory that train wrote?)"
                               : " (--run takes a run directory or its log.jsonl)");
  // Read whole, as a regular file of bounded size: a FIFO named log.jsonl would block forever.
  std::istringstream in(read_regular_file(log.path, kMaxLogBytes, "plot: " + log.path));
  std::string line, bad;
  std::int64_t number = 0, records = 0, bad_line = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!bad.empty())  // a bad line with more after it: not a log
      fail("plot: ", log.path, " line ", bad_line, " is not a JSON log record: '", bad,
           "' (expected one JSON object per line, as train writes log.jsonl)");
    const json r = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (r.is_discarded() || !r.is_object() || !r.contains("type") || !r["type"].is_string()) {
      bad = printable(line.substr(0, 60)) + (line.size() > 60 ? "..." : "");
      bad_line = number;
      continue;
    }
    read_record(log, r);
    ++records;
  }
  if (number == 0 || (records == 0 && bad.empty())) fail("plot: ", log.path, " is empty");
  if (records == 0)
    fail("plot: ", log.path, " is not a training log: line ", bad_line, " is '", bad,
         "', not a JSON object with a \"type\" (train writes one per line)");
  if (log.out_of_range > 0)
    std::fprintf(stderr, "plot: %s: %lld values beyond float's range (|x| > 3.5e38) left out\n",
                 log.path.c_str(), static_cast<long long>(log.out_of_range));
  if (!bad.empty())  // the last line only: a write cut short (the run was killed meanwhile)
    std::fprintf(stderr, "plot: %s: the last line is incomplete; it is left out\n",
                 log.path.c_str());
  if (log.train_loss.empty()) {  // a run shorter than --log-every: its epochs are the points
    log.train_loss = log.epoch_train_loss;
    log.train_accuracy = log.epoch_train_accuracy;
    log.lr = log.epoch_lr;
  }
  if (log.train_loss.empty())
    fail("plot: ", log.path, " holds no step or epoch record yet (a step is logged every "
         "--log-every steps)");
  return log;
}

std::string training_plot_svg(const std::vector<TrainingLog>& runs) {
  const double panel_w = 420, panel_h = 220, left = 70, gap_x = 90, gap_y = 90;
  const std::size_t per_row = 3;
  const double legend_h = 22.0 * ((runs.size() + per_row - 1) / per_row) + 24;
  const double top = 48 + legend_h + 30;  // the legend, then room for the panel titles
  const double width = left + 2 * panel_w + gap_x + 30;
  const double height = top + 2 * panel_h + gap_y + 50;
  SvgCanvas svg(width, height);
  svg.text(width / 2, 24, "training curves", 16, "middle");

  // The legend: a colour per run, then what solid and dashed mean.
  std::string split;
  for (const TrainingLog& r : runs)
    if (split.empty()) split = r.eval_split;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double lx = left + (i % per_row) * 300, ly = 48 + 22.0 * (i / per_row);
    const Rgb c = kColours[i % std::size(kColours)];
    svg.line(lx, ly, lx + 24, ly, c, 3);
    std::string text = runs[i].label;
    if (!runs[i].stop_reason.empty()) text += " (" + runs[i].stop_reason + ")";
    svg.text(lx + 30, ly + 4, text, 12);
  }
  svg.text(left, 48 + legend_h - 14,
           "solid: training (step records)" +
               (split.empty() ? std::string() : "; dashed with dots: " + split + " split (epochs)"),
           11);

  double last_step = 1;
  for (const TrainingLog& r : runs)
    for (const Curve* c : {&r.train_loss, &r.eval_loss})
      if (!c->empty()) last_step = std::max(last_step, c->back().first);
  const Axis xs = nice_axis(0, last_step);

  auto series = [&](Curve TrainingLog::*train, Curve TrainingLog::*eval) {
    std::vector<Series> s;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const Rgb c = kColours[i % std::size(kColours)];
      s.push_back({&(runs[i].*train), c, false});
      if (eval) s.push_back({&(runs[i].*eval), c, true});
    }
    return s;
  };
  const double x1 = left, x2 = left + panel_w + gap_x, y1 = top, y2 = top + panel_h + gap_y;
  draw_panel(svg, "loss", "loss", x1, y1, panel_w, panel_h, xs,
             series(&TrainingLog::train_loss, &TrainingLog::eval_loss), true);
  // Keypoint runs evaluate PCK, the fraction of joints found within reach: an accuracy too.
  bool pck = !runs.empty();
  for (const TrainingLog& r : runs) pck &= r.eval_accuracy_name == "pck";
  draw_panel(svg, "accuracy", pck ? "PCK (validation)" : "accuracy", x2, y1, panel_w, panel_h, xs,
             series(&TrainingLog::train_accuracy, &TrainingLog::eval_accuracy), false);
  draw_panel(svg, "lr", "learning rate", x1, y2, panel_w, panel_h, xs,
             series(&TrainingLog::lr, nullptr), true);
  draw_panel(svg, "grad_norm", "gradient norm (before clipping)", x2, y2, panel_w, panel_h, xs,
             series(&TrainingLog::grad_norm, nullptr), true);
  return svg.str();
}

std::string svg_to_png(const std::string& svg_path, const std::string& png_path) {
  const std::string in = shell_quoted(svg_path), out = shell_quoted(png_path);
  const std::pair<const char*, std::string> converters[] = {
      {"rsvg-convert", "rsvg-convert -b white -o " + out + " " + in},
      {"convert", "convert " + in + " " + out}};
  for (const auto& [tool, command] : converters) {
    if (!on_path(tool)) continue;
    std::error_code ignored;
    fs::remove(png_path, ignored);
    if (std::system((command + " >/dev/null 2>&1").c_str()) == 0 && fs::exists(png_path))
      return tool;
  }
  return "";
}

int plot_training_runs(const char* program, int argc, char** argv) {
  const std::string name = std::string(program) + " plot";
  cxxopts::Options o(name, "Draw a run's training curves from its log.jsonl (several runs: one "
                           "chart) as SVG, and PNG when rsvg-convert or ImageMagick is installed.");
  o.add_options()
      ("run", "a run directory (or its log.jsonl); repeat to compare runs", cxxopts::value<std::string>())
      ("out", "the SVG to write (default: RUN/curves.svg for one run, curves.svg for several); "
              "the PNG goes beside it", cxxopts::value<std::string>())
      ("no-png", "only the SVG")
      ("h,help", "show this help");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "plot", "run");
  const std::vector<std::string> given = positional_arguments(r, "run");
  if (given.empty()) fail("plot: --run DIR is required (a directory that train wrote)");
  std::vector<TrainingLog> runs;
  for (const std::string& run : given) runs.push_back(read_training_log(run));
  const std::string svg_path = r.count("out") ? r["out"].as<std::string>()
                               : runs.size() == 1 ? run_directory(given[0]) + "/curves.svg"
                                                  : std::string("curves.svg");
  if (svg_path.size() < 5 || svg_path.substr(svg_path.size() - 4) != ".svg")
    fail("plot: --out must name an .svg file, got '", svg_path, "'");
  try {
    write_svg_file(svg_path, training_plot_svg(runs));
  } catch (const Error& e) {
    fail("plot: ", e.what());
  }

  for (const TrainingLog& run : runs) {
    std::printf("%s: %lld steps", printable(run.label).c_str(), (long long)run.train_loss.back().first);
    if (!run.eval_accuracy.empty())
      std::printf(", %s %s %.4f at step %lld", run.eval_split.c_str(),
                  run.eval_accuracy_name.c_str(), run.eval_accuracy.back().second,
                  (long long)run.eval_accuracy.back().first);
    std::printf(", %s\n", run.stop_reason.empty() ? "no stop record (still running, or it crashed)"
                          : run.stop_reason == "finished" ? "finished"
                                                          : ("stopped: " + run.stop_reason).c_str());
  }
  std::printf("curves written to %s\n", svg_path.c_str());
  if (!r.count("no-png")) {
    const std::string png_path = svg_path.substr(0, svg_path.size() - 4) + ".png";
    const std::string converter = svg_to_png(svg_path, png_path);
    if (!converter.empty())
      std::printf("and to %s (converted by %s)\n", png_path.c_str(), converter.c_str());
    else
      std::printf("no PNG: no rsvg-convert (Debian: librsvg2-bin) or ImageMagick convert that "
                  "could convert it was found; the SVG opens in any browser\n");
  }
  return 0;
}

}  // namespace uwaga::apps
