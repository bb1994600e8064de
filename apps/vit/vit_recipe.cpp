#include "apps/vit/vit_recipe.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "apps/common/command_line.h"
#include "apps/common/svg_canvas.h"
#include "apps/common/training_flags.h"
#include "apps/vit/vit_commands.h"
#include "core/error.h"
#include "core/threads.h"
#include "data/auto_augment.h"
#include "data/data_loader.h"
#include "data/datasets.h"
#include "data/image_ops.h"
#include "data/png.h"

namespace uwaga::apps {
namespace {

using cxxopts::value;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string xml_escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string base64(const std::string& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {  // three bytes -> four digits of six bits
    const auto v = (std::uint32_t(std::uint8_t(bytes[i])) << 16) |
                   (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8) | std::uint8_t(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += digits[(v >> shift) & 63];
  }
  if (i < bytes.size()) {  // one or two bytes left: padded with '='
    std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) v |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
    out += digits[(v >> 18) & 63];
    out += digits[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? digits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
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

}  // namespace

void add_recipe_flags(cxxopts::Options& o) {
  o.add_options("recipe")
      ("policy", "automatic augmentation: none, randaugment or trivialaugment (TrivialAugment-Wide)", value<std::string>())
      ("randaugment-ops", "RandAugment: ops applied to each image (N)", value<std::int64_t>())
      ("randaugment-magnitude", "RandAugment: magnitude bin 0..30 (M)", value<std::int64_t>())
      ("crop-scale", "random resized crops of this fraction of the area up to all of it (0: off)", value<double>())
      ("erase", "probability of erasing a random rectangle of each image (0: off)", value<double>())
      ("mixup", "mixup: Beta(a, a) parameter a (0: off)", value<double>())
      ("cutmix", "CutMix: Beta(a, a) parameter a (0: off)", value<double>())
      ("mix-prob", "probability of mixing a batch when --mixup or --cutmix is on", value<double>())
      ("drop-path", "stochastic depth: the last block's drop probability (0: off)", value<double>())
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
  if (!r.count("out") && !r.count("time"))
    fail("augment: --out FILE.svg or FILE.png is required (or --time N)");
  const auto [dataset, dir] = vit_data(r, "cifar10");
  VitRunConfig geometry;
  set_dataset_geometry(geometry, dataset);  // checks the name
  // The flags are checked before the dataset is read: a wrong flag is named as such, not after
  // a complaint about missing data.
  const bool timing = r.count("time") > 0;
  const std::int64_t batches = timing ? r["time"].as<std::int64_t>() : 0;
  if (timing && batches < 1) fail("augment: --time must be at least 1 batch, got ", batches);
  VitRunConfig timed;
  if (timing) {
    timed = vit_preset(r["preset"].as<std::string>());
    apply_recipe_flags(timed, r);
  }
  const std::string out = timing ? "" : r["out"].as<std::string>();
  const bool png = out.size() > 4 && out.compare(out.size() - 4, 4, ".png") == 0;
  const bool svg = out.size() > 4 && out.compare(out.size() - 4, 4, ".svg") == 0;
  if (!timing && !png && !svg) fail("augment: --out must end in .svg or .png, got '", out, "'");
  const std::string space_name = r["space"].as<std::string>();
  if (space_name != "randaugment" && space_name != "trivialaugment")
    fail("augment: --space must be randaugment or trivialaugment, got '", space_name, "'");
  const AugmentSpace space = space_name == "randaugment" ? AugmentSpace::rand_augment
                                                         : AugmentSpace::trivial_augment_wide;
  const std::int64_t index = r["index"].as<std::int64_t>();
  if (index < 0) fail("augment: --index must be at least 0, got ", index);
  const ImageDataset data = load_dataset(dataset, dir, !r.count("test"));
  if (timing) return time_pipeline(batches, timed, data);
  if (index >= data.count)
    fail("augment: --index ", index, " is outside 0 .. ", data.count - 1, " (", data.count,
         " images)");
  const ByteImage image(data.channels, data.height, data.width, data.image(index));

  // The grid as one raster: a row per op (the original, then magnitude bins 6, 12, 18, 24, 30 of
  // 31, signed ops at +m), then rows of samples; each cell the image scaled up, with room under
  // it for the SVG's caption.
  const int bins[] = {6, 12, 18, 24, 30};
  const std::int64_t scale = data.height <= 28 ? 4 : 3, gap = 8, caption_h = 14;
  const std::int64_t side = scale * data.height, pitch_x = side + gap,
                     pitch_y = side + caption_h + gap;
  const int sample_rows = 4;  // RandAugment 2x9, TrivialAugment-Wide, resized crop, erasing
  const std::int64_t rows = kAugmentOpCount + sample_rows, cols = 6;
  ByteImage grid(3, rows * pitch_y + gap, cols * pitch_x + gap, 255);
  struct Caption {
    std::int64_t row, col;
    std::string text;
  };
  std::vector<Caption> captions;
  std::vector<std::string> row_names;
  auto draw = [&](const ByteImage& img, std::int64_t row, std::int64_t col,
                  const std::string& caption) {
    const std::int64_t top = gap + row * pitch_y, left = gap + col * pitch_x;
    for (std::int64_t c = 0; c < 3; ++c)
      for (std::int64_t y = 0; y < side; ++y)
        for (std::int64_t x = 0; x < side; ++x)
          grid.at(c, top + y, left + x) =
              img.at(img.channels == 3 ? c : 0, y / scale, x / scale);
    captions.push_back({row, col, caption});
  };
  std::int64_t row = 0;
  for (AugmentOp op : all_augment_ops()) {
    row_names.push_back(augment_op_name(op));
    draw(image, row, 0, "original");
    const bool has_magnitude = op != AugmentOp::identity && op != AugmentOp::autocontrast &&
                               op != AugmentOp::equalize;
    for (int c = 0; c < 5; ++c) {
      const double m = op_magnitude(space, op, bins[c], 31, image.height, image.width);
      draw(apply_augment_op(image, op, m), row, c + 1, has_magnitude ? number(m) : "");
    }
    ++row;
  }
  Generator gen(r["seed"].as<std::uint64_t>());
  // Erased boxes show mid-grey here; training sets them to 0 after normalising (the mean).
  for (const char* name : {"RandAugment 2x9", "TrivialAugment", "resized crop 0.35",
                           "erase (p = 1)"}) {
    row_names.push_back(name);
    draw(image, row, 0, "original");
    for (int c = 0; c < 5; ++c) {
      ByteImage a = image;
      if (row == kAugmentOpCount) a = rand_augment(image, {}, gen);
      if (row == kAugmentOpCount + 1) a = trivial_augment_wide(image, gen);
      if (row == kAugmentOpCount + 2) {
        const ImageBox b = draw_resized_crop(image.height, image.width, 0.35, gen);
        a = resized_crop(image, b.top, b.left, b.height, b.width, image.height, image.width);
      }
      if (row == kAugmentOpCount + 3) {
        const ImageBox b = draw_erase_box(image.height, image.width, gen);
        for (std::int64_t ch = 0; ch < a.channels; ++ch)
          for (std::int64_t y = b.top; y < b.top + b.height; ++y)
            for (std::int64_t x = b.left; x < b.left + b.width; ++x) a.at(ch, y, x) = 128;
      }
      draw(a, row, c + 1, "sample " + std::to_string(c + 1));
    }
    ++row;
  }
  const std::string title = dataset + (r.count("test") ? " test" : " training") + " image " +
                            std::to_string(index) + " (" + data.class_names[data.labels[index]] +
                            "): the original, then each op at magnitude bins 6, 12, 18, 24, 30 "
                            "of 31 (" + space_name + " ranges)";
  const std::string png_bytes = encode_png(grid);
  if (png) {
    write_svg_file(out, png_bytes);  // any bytes, atomically
    std::printf("%s\nwritten to %s; rows, top to bottom:", title.c_str(), out.c_str());
    for (const auto& name : row_names) std::printf(" %s,", name.c_str());
    std::printf(" each the original then five columns\n");
    return 0;
  }
  // The SVG: the raster as one embedded PNG, with the row names, captions and title as text.
  const double label_w = 120, title_h = 30;
  // Wide enough for the title too (about 6.5 px a character at 12 px).
  const double width = std::max(label_w + static_cast<double>(grid.width),
                                16 + 6.5 * static_cast<double>(title.size())),
               height = title_h + static_cast<double>(grid.height);
  // xlink:href, which every SVG renderer reads (SVG 2's plain href is newer).
  std::string page = "<svg xmlns=\"http://www.w3.org/2000/svg\" "
                     "xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"" + number(width) +
                    "\" height=\"" + number(height) + "\" font-family=\"sans-serif\">\n";
  page += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  page += "<text x=\"8\" y=\"20\" font-size=\"12\">" + xml_escaped(title) + "</text>\n";
  page += "<image x=\"" + number(label_w) + "\" y=\"" + number(title_h) + "\" width=\"" +
         number(static_cast<double>(grid.width)) + "\" height=\"" +
         number(static_cast<double>(grid.height)) +
         "\" style=\"image-rendering:pixelated\" xlink:href=\"data:image/png;base64," +
         base64(png_bytes) + "\"/>\n";
  for (std::size_t i = 0; i < row_names.size(); ++i)
    page += "<text x=\"8\" y=\"" +
           number(title_h + gap + static_cast<double>(i * pitch_y) + side / 2.0 + 4) +
           "\" font-size=\"11\">" + xml_escaped(row_names[i]) + "</text>\n";
  for (const Caption& c : captions)
    if (!c.text.empty())
      page += "<text x=\"" + number(label_w + gap + c.col * pitch_x + side / 2.0) + "\" y=\"" +
             number(title_h + gap + c.row * pitch_y + side + 11) +
             "\" font-size=\"9\" text-anchor=\"middle\">" + xml_escaped(c.text) + "</text>\n";
  page += "</svg>\n";
  write_svg_file(out, page);
  std::printf("augmentation grid written to %s\n", out.c_str());
  return 0;
}

}  // namespace uwaga::apps
