#include "apps/vit/vit_recipe.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/common/command_line.h"
#include "apps/common/svg_canvas.h"
#include "apps/common/training_flags.h"
#include "apps/vit/vit_data_flags.h"
#include "core/error.h"
#include "core/threads.h"
#include "data/images/auto_augment.h"
#include "data/data_loader.h"
#include "data/datasets.h"
#include "data/images/image_ops.h"
#include "data/images/png.h"

namespace uwaga::apps {
namespace {

using cxxopts::value;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Milliseconds a batch that a training DataLoader of `run`'s recipe (or none) takes to build
// `batches` batches (the BatchSource's batch(), with Mixup / CutMix), after one batch of warm-up.
double ms_per_batch(const ImageDataset& data, const VitRunConfig& run, std::int64_t batches) {
  DataLoaderOptions o;
  o.batch_size = run.batch_size;
  o.shuffle = true;
  o.drop_last = true;
  o.seed = run.seed;
  const ChannelStats stats = channel_stats(data);
  o.mean = stats.mean;
  o.std = stats.std;
  o.augment = training_augment(run);
  o.mix = training_mix(run);
  DataLoader loader(data, o);
  loader.begin_epoch(0);
  loader.batch(0);
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t b = 0; b < batches; ++b) loader.batch(1 + b % (loader.batches_per_epoch() - 1));
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  return took.count() / static_cast<double>(batches);
}

// `uwaga-vit augment --time N`: the data pipeline's cost per batch of `run` (a preset with the
// recipe flags applied) and without any augmentation, over N batches of `data`.
int time_pipeline(std::int64_t n, const VitRunConfig& run, const ImageDataset& data) {
  if (data.count < 2 * run.batch_size)
    fail("augment: --time needs at least two batches of ", run.batch_size, " images");
  VitRunConfig plain = run;
  plain.augment = false;
  plain.policy = "none", plain.crop_scale = 0, plain.erase = 0, plain.mixup = 0, plain.cutmix = 0;
  const double with = ms_per_batch(data, run, n), without = ms_per_batch(data, plain, n);
  std::printf("data pipeline, %s, batches of %lld images, %d thread(s):\n",
              run.preset.c_str(), (long long)run.batch_size, num_threads());
  std::printf("  recipe (%s): %.2f ms a batch\n", describe_recipe(run).c_str(), with);
  std::printf("  no augmentation: %.2f ms a batch\n", without);
  return 0;
}

// The augmentation picture: one image through every op at five magnitude bins, then samples of
// the whole policies, of resized crops and of erasing; each cell the image scaled up, with room
// under it for a caption.
struct AugmentGrid {
  struct Caption {
    std::int64_t row, col;
    std::string text;
  };
  ByteImage raster;                 // the cells on white
  std::vector<std::string> rows;    // each row's name
  std::vector<Caption> captions;    // under the cells: the magnitude, "sample 3", ...
  std::int64_t side, pitch_x, pitch_y, gap;  // a cell's side, from one cell to the next, margin
};

AugmentGrid draw_augment_grid(const ByteImage& image, AugmentSpace space, std::uint64_t seed) {
  const int bins[] = {6, 12, 18, 24, 30};  // of 31; signed ops at +m
  const std::int64_t scale = image.height <= 28 ? 4 : 3, caption_h = 14;
  AugmentGrid g;
  g.gap = 8;
  g.side = scale * image.height;
  g.pitch_x = g.side + g.gap;
  g.pitch_y = g.side + caption_h + g.gap;
  // RandAugment 2x9, TrivialAugment-Wide, AutoAugment, resized crop, erasing
  const int sample_rows = 5;
  const std::int64_t rows = kAugmentOpCount + sample_rows, cols = 6;
  g.raster = ByteImage(3, rows * g.pitch_y + g.gap, cols * g.pitch_x + g.gap, 255);
  auto draw = [&](const ByteImage& img, std::int64_t row, std::int64_t col,
                  const std::string& caption) {
    const std::int64_t top = g.gap + row * g.pitch_y, left = g.gap + col * g.pitch_x;
    for (std::int64_t c = 0; c < 3; ++c)
      for (std::int64_t y = 0; y < g.side; ++y)
        for (std::int64_t x = 0; x < g.side; ++x)
          g.raster.at(c, top + y, left + x) =
              img.at(img.channels == 3 ? c : 0, y / scale, x / scale);
    g.captions.push_back({row, col, caption});
  };
  std::int64_t row = 0;
  for (AugmentOp op : all_augment_ops()) {
    g.rows.push_back(augment_op_name(op));
    draw(image, row, 0, "original");
    const bool has_magnitude = op != AugmentOp::identity && op != AugmentOp::autocontrast &&
                               op != AugmentOp::equalize;
    for (int c = 0; c < 5; ++c) {
      const double m = op_magnitude(space, op, bins[c], 31, image.height, image.width);
      draw(apply_augment_op(image, op, m), row, c + 1, has_magnitude ? number(m) : "");
    }
    ++row;
  }
  Generator gen(seed);
  // Erased boxes show mid-grey here; training sets them to 0 after normalising (the mean).
  const char* samples[] = {"RandAugment 2x9", "TrivialAugment", "AutoAugment CIFAR-10",
                           "resized crop 0.35", "erase (p = 1)"};
  for (int s = 0; s < sample_rows; ++s) {
    g.rows.push_back(samples[s]);
    draw(image, row, 0, "original");
    for (int c = 0; c < 5; ++c) {
      ByteImage a = image;
      if (s == 0) a = rand_augment(image, {}, gen);
      if (s == 1) a = trivial_augment_wide(image, gen);
      if (s == 2) a = auto_augment_cifar10(image, gen);
      if (s == 3) {
        const ImageBox b = draw_resized_crop(image.height, image.width, 0.35, gen);
        a = resized_crop(image, b.top, b.left, b.height, b.width, image.height, image.width);
      }
      if (s == 4) {
        const ImageBox b = draw_erase_box(image.height, image.width, gen);
        for (std::int64_t ch = 0; ch < a.channels; ++ch)
          for (std::int64_t y = b.top; y < b.top + b.height; ++y)
            for (std::int64_t x = b.left; x < b.left + b.width; ++x) a.at(ch, y, x) = 128;
      }
      draw(a, row, c + 1, "sample " + std::to_string(c + 1));
    }
    ++row;
  }
  return g;
}

// The grid as an SVG: the raster embedded as one PNG, with the title, row names and captions as
// text beside and under it.
SvgCanvas augment_grid_svg(const AugmentGrid& g, const std::string& png, const std::string& title) {
  const double label_w = 120, title_h = 30;
  const auto at = [](std::int64_t v) { return static_cast<double>(v); };
  // Wide enough for the title too (about 6.5 px a character at 12 px).
  SvgCanvas svg(std::max(label_w + at(g.raster.width), 16 + 6.5 * at(title.size())),
                title_h + at(g.raster.height));
  svg.text(8, 20, title, 12);
  svg.png_image(label_w, title_h, at(g.raster.width), at(g.raster.height), png);
  for (std::size_t i = 0; i < g.rows.size(); ++i)
    svg.text(8, title_h + at(g.gap + static_cast<std::int64_t>(i) * g.pitch_y) + at(g.side) / 2 + 4,
             g.rows[i], 11);
  for (const AugmentGrid::Caption& c : g.captions)
    if (!c.text.empty())
      svg.text(label_w + at(g.gap + c.col * g.pitch_x) + at(g.side) / 2,
               title_h + at(g.gap + c.row * g.pitch_y + g.side) + 11, c.text, 9, "middle");
  return svg;
}

// `uwaga-vit augment --out`: the picture of `index` in `data`.
int write_augment_grid(const std::string& out, const ImageDataset& data, std::int64_t index,
                       AugmentSpace space, std::uint64_t seed, const std::string& what) {
  if (index >= data.count)
    fail("augment: --index ", index, " is outside 0 .. ", data.count - 1, " (", data.count,
         " images)");
  const ByteImage image(data.channels, data.height, data.width, data.image(index));
  const AugmentGrid grid = draw_augment_grid(image, space, seed);
  const std::string png = encode_png(grid.raster);
  const char* ranges = space == AugmentSpace::rand_augment ? "randaugment" : "trivialaugment";
  const std::string title = what + " image " + std::to_string(index) + " (" +
                            data.class_names[data.labels[index]] + "): the original, then each "
                            "op at magnitude bins 6, 12, 18, 24, 30 of 31 (" + ranges + " ranges)";
  if (out.compare(out.size() - 4, 4, ".png") == 0) {
    write_svg_file(out, png);  // any bytes, atomically
    std::printf("%s\nwritten to %s; rows, top to bottom:", title.c_str(), out.c_str());
    for (const auto& name : grid.rows) std::printf(" %s,", name.c_str());
    std::printf(" each the original then five columns\n");
  } else {
    augment_grid_svg(grid, png, title).save(out);
    std::printf("augmentation grid written to %s\n", out.c_str());
  }
  return 0;
}

}  // namespace

void add_recipe_flags(cxxopts::Options& o) {
  o.add_options("recipe")
      ("policy", "automatic augmentation: none, randaugment, trivialaugment (TrivialAugment-Wide) or autoaugment (AutoAugment's CIFAR-10 policy)", value<std::string>())
      ("randaugment-ops", "RandAugment: ops applied to each image (N)", value<std::int64_t>())
      ("randaugment-magnitude", "RandAugment: magnitude bin 0..30 (M)", value<std::int64_t>())
      ("crop-scale", "random resized crops of this fraction of the area up to all of it (0: off)", value<double>())
      ("erase", "probability of erasing a random rectangle of each image (0: off)", value<double>())
      ("mixup", "mixup: Beta(a, a) parameter a (0: off)", value<double>())
      ("cutmix", "CutMix: Beta(a, a) parameter a (0: off)", value<double>())
      ("mix-prob", "probability of mixing a batch when --mixup or --cutmix is on", value<double>())
      ("drop-path", "stochastic depth: the last block's drop probability (0: off)", value<double>())
      ("dropout", "dropout on the embeddings and each block's attention and MLP outputs (0: off)", value<double>())
      ("attention-dropout", "dropout on each block's attention weights, the softmax's output (0: off)", value<double>())
      ("ema", "evaluate a moving average of the weights with this decay, e.g. 0.999 (0: off)", value<double>());
}

void apply_recipe_flags(VitRunConfig& run, const cxxopts::ParseResult& r) {
  if (r.count("policy")) {
    run.policy = r["policy"].as<std::string>();
    augment_policy(run.policy, "train: --policy");
  }
  auto set = [&](const char* flag, auto& field) {
    if (r.count(flag)) field = r[flag].as<std::decay_t<decltype(field)>>();
  };
  set("randaugment-ops", run.randaugment_ops);
  set("randaugment-magnitude", run.randaugment_magnitude);
  set("crop-scale", run.crop_scale);
  set("erase", run.erase);
  set("mixup", run.mixup);
  set("cutmix", run.cutmix);
  set("mix-prob", run.mix_probability);
  set("drop-path", run.model.drop_path);
  set("dropout", run.model.dropout);
  set("attention-dropout", run.model.attention_dropout);
  set("ema", run.ema);
  check_recipe(run);
}

int vit_augment(int argc, char** argv) {
  cxxopts::Options o("uwaga-vit augment",
                     "One image through every augmentation op at five magnitudes, as a picture.");
  o.add_options()
      ("test", "take the image from the test set (default: the training set)")
      ("index", "which image", value<std::int64_t>()->default_value("0"))
      ("space", "the ops' ranges: randaugment or trivialaugment (TrivialAugment-Wide)", value<std::string>()->default_value("randaugment"))
      ("seed", "of the sampled rows (whole policies, crops, erasing)", value<std::uint64_t>()->default_value("0"))
      ("out", "the picture: NAME.svg (labelled) or NAME.png (the images only)", value<std::string>())
      ("time", "no picture: time N batches of --preset's training pipeline, with its recipe and without augmentation", value<std::int64_t>())
      ("preset", "with --time: whose recipe and batch size", value<std::string>()->default_value("cifar10-vit"))
      ("h,help", "show this help");
  add_vit_data_flags(o, "cifar10");
  add_recipe_flags(o);
  add_threads_option(o, "all cores");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "augment");
  set_threads_from_option(r, "uwaga-vit", true);
  const auto [dataset, dir] = vit_data(r, "cifar10");
  VitRunConfig geometry;
  set_dataset_geometry(geometry, dataset);  // checks the name
  // Each mode checks its flags before the dataset is read: a wrong flag is named as such, not
  // after a complaint about missing data.
  if (r.count("time")) {
    const std::int64_t batches = r["time"].as<std::int64_t>();
    // A timing needs hundreds of batches, not 10^12 (which ran for ever).
    if (batches < 1 || batches > 100'000)
      fail("augment: --time must be from 1 to 100,000 batches, got ", batches);
    VitRunConfig timed = vit_preset(r["preset"].as<std::string>());
    apply_recipe_flags(timed, r);
    return time_pipeline(batches, timed, load_dataset(dataset, dir, true));
  }
  if (!r.count("out")) fail("augment: --out FILE.svg or FILE.png is required (or --time N)");
  const std::string out = r["out"].as<std::string>();
  const std::string ending = out.size() > 4 ? out.substr(out.size() - 4) : "";
  if (ending != ".svg" && ending != ".png")
    fail("augment: --out must end in .svg or .png, got '", out, "'");
  const std::string space = r["space"].as<std::string>();
  if (space != "randaugment" && space != "trivialaugment")
    fail("augment: --space must be randaugment or trivialaugment, got '", space, "'");
  const std::int64_t index = r["index"].as<std::int64_t>();
  if (index < 0) fail("augment: --index must be at least 0, got ", index);
  const bool training = !r.count("test");
  return write_augment_grid(out, load_dataset(dataset, dir, training), index,
                            space == "randaugment" ? AugmentSpace::rand_augment
                                                   : AugmentSpace::trivial_augment_wide,
                            r["seed"].as<std::uint64_t>(),
                            dataset + (training ? " training" : " test"));
}

}  // namespace uwaga::apps
