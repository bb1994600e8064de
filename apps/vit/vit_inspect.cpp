// uwaga-vit predict, attention and explore: look at what a trained model does with single images.
#include <cxxopts.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "apps/common/attention_explorer.h"
#include "apps/common/command_line.h"
#include "apps/common/svg_canvas.h"
#include "apps/common/training_flags.h"
#include "apps/vit/vit_checkpoint.h"
#include "apps/vit/vit_commands.h"
#include "apps/vit/vit_data_flags.h"
#include "core/graph.h"
#include "data/data_loader.h"
#include "data/datasets.h"
#include "data/images/pnm.h"
#include "nn/attention_rollout.h"
#include "nn/softmax.h"

namespace uwaga::apps {
namespace {

using cxxopts::value;

// One image to look at: its pixels (C, H, W) and a name for messages.
struct NamedImage {
  std::string name;
  ImageDataset image;  // count 1
};

std::string class_name(const VitRunConfig& run, std::int64_t c) {
  return c < static_cast<std::int64_t>(run.class_names.size()) ? run.class_names[c]
                                                                : std::to_string(c);
}

// How to turn a picture into what the model reads: a PGM (gray) or PPM (colour) of its size; for
// the MNIST presets a light digit on a dark background, as MNIST's are.
std::string conversion_hint(const VitRunConfig& run) {
  const std::string size = std::to_string(run.model.image_size);
  const std::string geometry = size + "x" + size;
  if (run.model.channels == 1) {
    const bool dark_background = run.dataset == "mnist" || run.dataset == "fashion-mnist";
    return "convert it to a " + geometry + " gray PGM" +
           (dark_background ? std::string(", light on a dark background as in ") + run.dataset +
                                  " (a dark digit on white paper: invert it)"
                            : std::string()) +
           ", e.g. with ImageMagick: convert photo.png -colorspace Gray -resize '" + geometry +
           "!'" + (dark_background ? " -negate" : "") + " image.pgm, or with netpbm: " +
           "pngtopnm photo.png | ppmtopgm | pamscale -xsize " + size + " -ysize " + size +
           (dark_background ? " | pnminvert" : "") + " > image.pgm";
  }
  return "convert it to a " + geometry + " colour PPM, e.g. with ImageMagick: convert photo.png "
         "-resize '" + geometry + "!' image.ppm, or with netpbm: pngtopnm photo.png | pamscale "
         "-xsize " + size + " -ysize " + size + " > image.ppm";
}

// read_pnm, with the way to convert any other image (PNG, JPEG, ...) in its message.
ImageDataset read_image(const std::string& path, const VitRunConfig& run) {
  try {
    return read_pnm(path);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find("is not a PGM or PPM") == std::string::npos) throw;
    fail(what, "; ", conversion_hint(run));
  }
}

std::vector<NamedImage> images_from_flags(const cxxopts::ParseResult& r, const VitRunConfig& run,
                                          const char* mode) {
  if (!r.count("index") && (r.count("dataset") || r.count("data-dir")))
    fail(mode, ": --dataset and --data-dir say where --index N takes its test image from; "
         "without --index they have nothing to do");
  std::vector<NamedImage> images;
  for (const std::string& path : positional_arguments(r, "image"))
    images.push_back({path, read_image(path, run)});
  if (r.count("index")) {
    const std::int64_t index = r["index"].as<std::int64_t>();
    const auto [dataset, dir] = vit_data(r, run.dataset);
    ImageDataset test = load_dataset(dataset, dir, false);
    if (index < 0 || index >= test.count)
      fail(mode, ": --index ", index, " is out of range: the ", dataset, " test set has ",
           test.count, " images");
    ImageDataset one;
    one.count = 1;
    one.channels = test.channels, one.height = test.height, one.width = test.width;
    one.pixels.assign(test.image(index), test.image(index) + test.image_size());
    one.labels = {test.labels[index]};
    one.class_names = test.class_names;
    VitRunConfig named = run;  // the label in the names of the dataset the image comes from
    if (dataset != run.dataset) named.class_names = test.class_names;
    const std::string label = class_name(named, test.labels[index]);
    images.push_back({dataset + " test image " + std::to_string(index) + " (label " + label + ")",
                      one});
  }
  if (images.empty()) fail(mode, ": give image files (PGM/PPM) or --index N");
  for (auto& im : images)
    if (im.image.channels != run.model.channels || im.image.height != run.model.image_size ||
        im.image.width != run.model.image_size)
      fail(mode, ": '", im.name, "' is ", im.image.channels, "x", im.image.height, "x",
           im.image.width, " but the model expects ", run.model.channels, "x",
           run.model.image_size, "x", run.model.image_size, " (channels x height x width); ",
           conversion_hint(run));
  return images;
}

Tensor as_batch(const ImageDataset& image, const VitRunConfig& run) {
  DataLoaderOptions o;
  o.batch_size = 1;
  o.mean = run.mean;
  o.std = run.std;
  ImageDataset one = image;  // an image file has no label: give it the model's classes
  one.labels = {0};
  one.class_names = run.class_names;
  DataLoader loader(one, o);
  return loader.make_batch({0}, 0).images;  // (1, C, H, W)
}

void common_flags(cxxopts::Options& o) {
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-vit train", value<std::string>())
      ("index", "use image N of the test split", value<std::int64_t>())
      ("image", "a PGM (grey) or PPM (colour) image file, also given as an argument without the "
                "flag", value<std::vector<std::string>>())
      ("h,help", "show this help");
  add_vit_data_flags(o, "the checkpoint's");
  add_threads_option(o, "all cores");
  o.parse_positional({"image"});
  o.show_positional_help();
}

// Exactly one image from the flags (a file or --index N).
NamedImage one_image(const cxxopts::ParseResult& r, const VitRunConfig& run, const char* mode) {
  std::vector<NamedImage> images = images_from_flags(r, run, mode);
  if (images.size() != 1) fail(mode, ": give exactly one image (a file or --index N)");
  return images[0];
}

// What the model made of one image: its class probabilities and every block's attention.
struct LookedAt {
  std::vector<double> probabilities;  // (classes)
  std::int64_t predicted = 0;
  std::vector<Tensor> maps;  // per block, A (1, h, T, T): T = N + 1 with a class token, else N
  std::vector<double> pooling;  // with sequence pooling, its weights a over the T tokens
};

LookedAt look_at(LoadedVit& vit, const ImageDataset& image) {
  NoGradGuard no_grad;
  vit.model->keep_attention(true);
  LookedAt seen;
  seen.probabilities = nn::softmax(vit.model->forward(as_batch(image, vit.run)), 1).to_vector();
  seen.predicted = std::max_element(seen.probabilities.begin(), seen.probabilities.end()) -
                   seen.probabilities.begin();
  seen.maps = vit.model->attention_maps();
  if (!vit.run.model.class_token()) seen.pooling = vit.model->pooling_weights().to_vector();
  vit.model->keep_attention(false);
  return seen;
}

// "NAME: predicted 7 (98%)".
std::string prediction_line(const NamedImage& im, const VitRunConfig& run, const LookedAt& seen) {
  return im.name + ": predicted " + class_name(run, seen.predicted) + " (" +
         std::to_string(static_cast<int>(100 * seen.probabilities[seen.predicted] + 0.5)) + "%)";
}

// What the head reads, in one panel: over the N patches, and the class token's weight on itself
// (NaN without a class token).
struct ClassTokenPanel {
  std::string title;
  std::vector<double> patches;  // (N)
  double self = 0;
};

// The row of a (T, T) map that the head reads: the class token's, row 0, when `pooling` is empty;
// with sequence pooling the rows weighed by the pooling weights a, Σ_t a_t M[t, :] — where the
// tokens the head reads look.
ClassTokenPanel read_row(const double* M, std::int64_t T, const std::vector<double>& pooling,
                         double share, ClassTokenPanel p) {
  if (pooling.empty()) {
    p.self += share * M[0];
    for (std::int64_t n = 1; n < T; ++n) p.patches[n - 1] += share * M[n];
    return p;
  }
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t n = 0; n < T; ++n) p.patches[n] += share * pooling[t] * M[t * T + n];
  return p;
}

ClassTokenPanel empty_panel(const std::string& title, std::int64_t T, bool class_token) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {title, std::vector<double>(class_token ? T - 1 : T, 0.0), class_token ? 0.0 : nan};
}

// Head k of A (1, h, T, T), or the mean of the heads when k == h: the row the head reads.
ClassTokenPanel class_token_panel(const Tensor& A, std::int64_t k, const std::string& title,
                                  const std::vector<double>& pooling) {
  const std::int64_t h = A.size(1), T = A.size(2);
  const std::vector<double> v = A.to_vector();
  ClassTokenPanel p = empty_panel(title, T, pooling.empty());
  for (std::int64_t head = 0; head < h; ++head) {
    if (k < h && head != k) continue;
    const double share = k < h ? 1.0 : 1.0 / static_cast<double>(h);
    p = read_row(v.data() + head * T * T, T, pooling, share, std::move(p));  // A[0, head]
  }
  return p;
}

ClassTokenPanel rollout_panel(const std::vector<Tensor>& maps, const std::vector<double>& pooling) {
  const Tensor R = nn::attention_rollout(maps);  // (1, T, T)
  const std::int64_t T = R.size(1);
  return read_row(R.to_vector().data(), T, pooling, 1.0,
                  empty_panel("rollout", T, pooling.empty()));
}

// The input image and the panels over it, row by row (the first row starts with the image);
// under each panel its title and the class token's weight on itself; a legend below. `scale`:
// shared, panel or absolute (the --scale flag).
SvgCanvas draw_class_token_svg(const ImageDataset& image, const VitRunConfig& run,
                               const std::vector<std::vector<ClassTokenPanel>>& rows,
                               const std::string& scale, const std::string& title) {
  const std::int64_t H = run.model.image_size, grid = H / run.model.patch;
  const double panel = 160, gap = 20, cell = panel / static_cast<double>(H);
  const double panel_h = panel + 52, top = 40;
  std::size_t columns = 0;
  double largest = 0;
  for (const auto& row : rows) {
    columns = std::max(columns, row.size());
    for (const auto& p : row)
      for (double w : p.patches) largest = std::max(largest, w);
  }
  const double width = std::max(static_cast<double>(columns + 1) * (panel + gap) + gap, 620.0);
  const double legend_y = top + static_cast<double>(rows.size()) * panel_h + 10;
  SvgCanvas svg(width, legend_y + 50);
  std::vector<double> pixels(image.pixels.size());  // in [0, 1]
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = image.pixels[i] / 255.0;
  auto draw_image = [&](double x, double y) {
    if (image.channels == 3) svg.rgb_image(x, y, pixels, H, H, cell);
    else svg.gray_image(x, y, pixels, H, H, cell);
  };
  draw_image(gap, top);
  svg.text(gap + panel / 2, top + panel + 16, "input", 12, "middle");
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows[i].size(); ++j) {
      const ClassTokenPanel& p = rows[i][j];
      const double x = gap + static_cast<double>(j + 1) * (panel + gap);
      const double y = top + static_cast<double>(i) * panel_h;
      double own = 0;
      for (double w : p.patches) own = std::max(own, w);
      draw_image(x, y);
      const double brightest = scale == "shared" ? largest : scale == "panel" ? own : 1.0;
      svg.heatmap(x, y, p.patches, grid, grid, panel / grid, panel / grid, ColourScale{brightest},
                  0.6);
      char numbers[96];
      if (std::isnan(p.self)) std::snprintf(numbers, sizeof numbers, "max %.3f", own);
      else std::snprintf(numbers, sizeof numbers, "on itself %.3f, max %.3f", p.self, own);
      svg.text(x + panel / 2, y + panel + 16, p.title, 12, "middle");
      svg.text(x + panel / 2, y + panel + 31, numbers, 10, "middle");
    }
  svg.text(gap, 24, title, 14);
  if (scale == "panel")
    svg.colour_legend(gap, legend_y, 240, ColourScale{1.0},
                      "fraction of the panel's own largest weight (each panel its own scale; "
                      "'max' under it)");
  else
    svg.colour_legend(gap, legend_y, 240, ColourScale{scale == "shared" ? largest : 1.0},
                      run.model.class_token()
                          ? "the class token's weight on a patch, one scale for every panel ('on "
                            "itself': its weight on its own vector)"
                          : "the pooled tokens' weight on a patch (rows weighed by the pooling "
                            "weights a), one scale for every panel");
  return svg;
}

}  // namespace

int vit_predict(int argc, char** argv) {
  cxxopts::Options o("uwaga-vit predict", "Top-3 classes of images (PGM/PPM files or --index N).");
  o.positional_help("[IMAGE ...]");
  common_flags(o);
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "predict", "image");
  if (!r.count("checkpoint")) fail("predict: --checkpoint FILE is required");
  set_threads_from_option(r, "uwaga-vit", true);
  LoadedVit vit = load_vit(r["checkpoint"].as<std::string>());
  NoGradGuard no_grad;
  for (const NamedImage& im : images_from_flags(r, vit.run, "predict")) {
    Tensor p = nn::softmax(vit.model->forward(as_batch(im.image, vit.run)), 1);  // (1, classes)
    std::vector<double> probs = p.to_vector();
    std::vector<std::int64_t> order(probs.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return probs[a] > probs[b]; });
    std::printf("%s:", im.name.c_str());
    for (std::size_t k = 0; k < std::min<std::size_t>(3, order.size()); ++k)
      std::printf("%s %s %.1f%%", k ? "," : "", class_name(vit.run, order[k]).c_str(),
                  100 * probs[order[k]]);
    std::printf("\n");
  }
  return 0;
}

int vit_attention(int argc, char** argv) {
  cxxopts::Options o("uwaga-vit attention",
                     "Draw the class token's attention over the patches, per layer and as "
                     "attention rollout, over the input image (SVG).");
  o.positional_help("[IMAGE]");
  common_flags(o);
  o.add_options()
      ("out", "the SVG file to write", value<std::string>())
      ("heads", "a panel for every head of every layer (and their mean), not only the means")
      ("scale", "shared: one colour scale for every panel, 0 to the largest weight drawn; "
                "panel: each panel from 0 to its own largest weight; absolute: every panel from 0 "
                "to 1", value<std::string>()->default_value("shared"));
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "attention", "image");
  if (!r.count("checkpoint")) fail("attention: --checkpoint FILE is required");
  if (!r.count("out")) fail("attention: --out FILE.svg is required");
  const std::string scale = r["scale"].as<std::string>();
  if (scale != "shared" && scale != "panel" && scale != "absolute")
    fail("attention: --scale must be shared, panel or absolute, got '", scale, "'");
  set_threads_from_option(r, "uwaga-vit", true);
  LoadedVit vit = load_vit(r["checkpoint"].as<std::string>());
  const NamedImage im = one_image(r, vit.run, "attention");
  const LookedAt seen = look_at(vit, im.image);

  // The panels, row by row: the means of each layer's heads and the rollout; with --heads the
  // rollout first, then a row per layer of its heads and their mean.
  const std::int64_t L = static_cast<std::int64_t>(seen.maps.size());
  const std::int64_t heads = vit.run.model.heads;
  const bool each_head = r.count("heads") > 0;
  // With sequence pooling the first panel is the pooling weights a themselves: which tokens'
  // final states the head reads.
  std::vector<std::vector<ClassTokenPanel>> rows(1);
  if (!seen.pooling.empty()) rows[0].push_back({"pooling weights a", seen.pooling, std::nan("")});
  for (std::int64_t l = 0; l < L && !each_head; ++l)
    rows[0].push_back(class_token_panel(seen.maps[l], heads, "layer " + std::to_string(l + 1),
                                        seen.pooling));
  rows[0].push_back(rollout_panel(seen.maps, seen.pooling));
  for (std::int64_t l = 0; l < L && each_head; ++l) {
    rows.emplace_back();
    for (std::int64_t k = 0; k <= heads; ++k) {
      const std::string head = k < heads ? "head " + std::to_string(k + 1) : "mean";
      rows.back().push_back(class_token_panel(
          seen.maps[l], k, "layer " + std::to_string(l + 1) + ", " + head, seen.pooling));
    }
  }
  const std::string title =
      prediction_line(im, vit.run, seen) +
      (seen.pooling.empty() ? " — where the class token looks" : " — where the pooled tokens look") +
      (each_head ? ", each head and their mean" : ", mean over heads");
  const std::string out = r["out"].as<std::string>();
  draw_class_token_svg(im.image, vit.run, rows, scale, title).save(out);
  std::printf("%s; attention of %lld layers%s and their rollout drawn in %s\n",
              prediction_line(im, vit.run, seen).c_str(), static_cast<long long>(L),
              each_head ? " (every head)" : "", out.c_str());
  return 0;
}

int vit_explore(int argc, char** argv) {
  cxxopts::Options o("uwaga-vit explore",
                     "Write one HTML page to explore every layer and head of the attention on one "
                     "image: the class token's weights over the image, the rollout, and the full "
                     "maps (self-contained: open it in any browser).");
  o.positional_help("[IMAGE]");
  common_flags(o);
  o.add_options()("out", "the HTML file to write", value<std::string>());
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "explore", "image");
  if (!r.count("checkpoint")) fail("explore: --checkpoint FILE is required");
  if (!r.count("out")) fail("explore: --out FILE.html is required");
  set_threads_from_option(r, "uwaga-vit", true);
  const std::string checkpoint = r["checkpoint"].as<std::string>();
  LoadedVit vit = load_vit(checkpoint);
  const NamedImage im = one_image(r, vit.run, "explore");
  const LookedAt seen = look_at(vit, im.image);
  const auto& m = vit.run.model;
  const std::int64_t grid = m.image_size / m.patch, N = grid * grid;
  const bool cls = m.class_token();

  std::vector<std::string> tokens;
  if (cls) tokens.push_back("class");
  for (std::int64_t n = 0; n < N; ++n)
    tokens.push_back("patch (" + std::to_string(n / grid + 1) + ", " +
                     std::to_string(n % grid + 1) + ")");
  AttentionExplorer e;
  e.title = "uwaga-vit: attention on " + im.name;
  e.subtitle = prediction_line(im, vit.run, seen) + "  ·  " + checkpoint + "  ·  " +
               std::to_string(m.depth) + " layers × " + std::to_string(m.heads) + " heads, " +
               std::to_string(N) + " patches of " + std::to_string(m.patch) + "×" +
               std::to_string(m.patch) + " pixels" +
               (cls ? " and the class token" : ", pooled by sequence pooling");
  e.notes = attention_explorer_basics();
  if (!cls)
    e.notes.push_back(
        "This model has no class token: its N = " + std::to_string(N) + " tokens are the cells "
        "of the patch grid, and the head reads a weighted mean of all of their final states, "
        "with weights a = softmax over the tokens of a learned score of each (sequence pooling, "
        "nn/vision_transformer.h). Pick a patch to see where that token looks.");
  else e.notes.push_back(
      "The image is cut into N = HW/P² = " + std::to_string(N) + " patches of " +
      std::to_string(m.patch) + "×" + std::to_string(m.patch) + " pixels, each embedded as one "
      "token, and a learnable class token goes first: z_0 = [x_class; x_p^1 E; …; x_p^N E] + "
      "E_pos (SEEDS §6). The classifier reads only the class token's final state, so its row of "
      "A — drawn over the image in the first section — shows which patches it gathered its "
      "answer from, layer by layer; 'on itself' is the weight it keeps on its own vector. Pick "
      "another token (a patch) to see where that one looks.");
  e.notes.push_back(attention_rollout_note());
  AttentionFamily self;
  self.id = "self", self.name = "self-attention";
  self.about = std::string("Rows: the token that attends (query), ") +
               (cls ? "the class token first, then the patches row by row" : "the patches row by row") +
               "; columns: the token attended to (key), in the same order.";
  self.queries = self.keys = tokens;
  self.layers = seen.maps;
  e.families.push_back(self);
  ExplorerImage image;
  image.channels = im.image.channels, image.height = image.width = m.image_size;
  image.grid_rows = image.grid_cols = grid;
  image.family = "self";
  for (std::uint8_t p : im.image.pixels) image.pixels.push_back(p / 255.0);
  image.queries.clear();
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(tokens.size()); ++t) {
    image.queries.push_back(t);
    image.query_names.push_back(cls && t == 0 ? "the class token" : tokens[t]);
  }
  image.first_key = cls ? 1 : 0;
  // The class token's weight on itself (a patch's, on the class token); none without one.
  image.self_key = cls ? 0 : -1;
  image.rollout = nn::attention_rollout(seen.maps);  // (1, T, T)
  e.image = image;
  const std::string out = r["out"].as<std::string>();
  save_attention_explorer(e, out);
  std::printf("%s; %lld layers x %lld heads written to %s (open it in a browser)\n",
              prediction_line(im, vit.run, seen).c_str(), static_cast<long long>(m.depth),
              static_cast<long long>(m.heads), out.c_str());
  return 0;
}

}  // namespace uwaga::apps
