// uwaga-vit predict and attention: look at what a trained model does with single images.
#include <cxxopts.hpp>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "apps/common/command_line.h"
#include "apps/common/svg_canvas.h"
#include "apps/common/thread_policy.h"
#include "apps/vit/vit_checkpoint.h"
#include "apps/vit/vit_commands.h"
#include "core/graph.h"
#include "core/threads.h"
#include "data/data_loader.h"
#include "data/datasets.h"
#include "data/pnm.h"
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
  std::vector<NamedImage> images;
  for (const std::string& path : positional_arguments(r, "images"))
    images.push_back({path, read_image(path, run)});
  if (r.count("index")) {
    const std::int64_t index = r["index"].as<std::int64_t>();
    std::string dir =
        r.count("data-dir") ? r["data-dir"].as<std::string>() : default_data_dir(run.dataset);
    ImageDataset test = load_dataset(run.dataset, dir, false);
    if (index < 0 || index >= test.count)
      fail(mode, ": --index ", index, " is out of range: the ", run.dataset, " test set has ",
           test.count, " images");
    ImageDataset one;
    one.count = 1;
    one.channels = test.channels, one.height = test.height, one.width = test.width;
    one.pixels.assign(test.image(index), test.image(index) + test.image_size());
    one.labels = {test.labels[index]};
    one.class_names = test.class_names;
    images.push_back({run.dataset + " test image " + std::to_string(index) + " (label " +
                          class_name(run, test.labels[index]) + ")",
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
      ("data-dir", "where the dataset's files are (default: data/cache/DATASET)", value<std::string>())
      ("threads", "threads for uwaga and OpenBLAS", value<int>())
      ("images", "PGM/PPM image files", value<std::vector<std::string>>())
      ("h,help", "show this help");
  o.parse_positional({"images"});
}

}  // namespace

int vit_predict(int argc, char** argv) {
  cxxopts::Options o("uwaga-vit predict", "Top-3 classes of images (PGM/PPM files or --index N).");
  o.positional_help("[IMAGE ...]");
  common_flags(o);
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "predict", "images");
  if (!r.count("checkpoint")) fail("predict: --checkpoint FILE is required");
  if (r.count("threads")) {
    warn_if_more_threads_than_cores("uwaga-vit", r["threads"].as<int>());
    set_num_threads(r["threads"].as<int>());
  }
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
  o.add_options()("out", "the SVG file to write", value<std::string>());
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "attention", "images");
  if (!r.count("checkpoint")) fail("attention: --checkpoint FILE is required");
  if (!r.count("out")) fail("attention: --out FILE.svg is required");
  if (r.count("threads")) {
    warn_if_more_threads_than_cores("uwaga-vit", r["threads"].as<int>());
    set_num_threads(r["threads"].as<int>());
  }
  LoadedVit vit = load_vit(r["checkpoint"].as<std::string>());
  std::vector<NamedImage> images = images_from_flags(r, vit.run, "attention");
  if (images.size() != 1) fail("attention: give exactly one image (a file or --index N)");
  const NamedImage& im = images[0];

  NoGradGuard no_grad;
  vit.model->keep_attention(true);
  Tensor probs = nn::softmax(vit.model->forward(as_batch(im.image, vit.run)), 1);
  std::vector<double> p = probs.to_vector();
  const std::int64_t predicted = std::max_element(p.begin(), p.end()) - p.begin();
  std::vector<Tensor> maps = vit.model->attention_maps();

  // Panels: the image, one per layer, and the rollout; each attention map over the image.
  const auto& m = vit.run.model;
  const std::int64_t H = m.image_size, grid = m.image_size / m.patch;
  const double cell = 160.0 / H, panel = 160, gap = 20;
  const std::int64_t panels = static_cast<std::int64_t>(maps.size()) + 2;
  SvgCanvas svg(panels * (panel + gap) + gap, panel + 80);
  std::vector<double> gray(H * H, 0.0);  // the image, channels averaged, in [0, 1]
  for (std::int64_t c = 0; c < im.image.channels; ++c)
    for (std::int64_t i = 0; i < H * H; ++i)
      gray[i] += im.image.pixels[c * H * H + i] / 255.0 / im.image.channels;
  auto draw_panel = [&](std::int64_t k, const std::vector<double>* attention, const std::string& title) {
    const double x = gap + k * (panel + gap), y = 40;
    svg.gray_image(x, y, gray, H, H, cell);
    if (attention) svg.heatmap(x, y, *attention, grid, grid, panel / grid, panel / grid, 0.6);
    svg.text(x + panel / 2, y + panel + 18, title, 12, "middle");
  };
  draw_panel(0, nullptr, "input");
  for (std::size_t l = 0; l < maps.size(); ++l) {
    std::vector<double> a = nn::class_token_attention(maps[l]).to_vector();  // (N)
    draw_panel(static_cast<std::int64_t>(l) + 1, &a, "layer " + std::to_string(l + 1));
  }
  Tensor R = nn::attention_rollout(maps);  // (1, T, T)
  std::vector<double> rollout(grid * grid);
  for (std::int64_t n = 0; n < grid * grid; ++n) rollout[n] = R.at({0, 0, n + 1});
  draw_panel(panels - 1, &rollout, "rollout");
  svg.text(gap, 24,
           im.name + ": predicted " + class_name(vit.run, predicted) + " (" +
               std::to_string(static_cast<int>(100 * p[predicted] + 0.5)) +
               "%) — class token attention, mean over heads",
           14);
  const std::string out = r["out"].as<std::string>();
  svg.save(out);
  std::printf("%s: predicted %s; attention of %zu layers and their rollout drawn in %s\n",
              im.name.c_str(), class_name(vit.run, predicted).c_str(), maps.size(), out.c_str());
  return 0;
}

}  // namespace uwaga::apps
