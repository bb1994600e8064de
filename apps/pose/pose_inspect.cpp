// uwaga-pose predict, attention and explore: look at what a trained model does with one crop.
#include <cxxopts.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "apps/common/attention_explorer.h"
#include "apps/common/command_line.h"
#include "apps/common/training_flags.h"
#include "apps/pose/pose_checkpoint.h"
#include "apps/pose/pose_commands.h"
#include "apps/pose/pose_pictures.h"
#include "apps/pose/pose_training.h"
#include "core/graph.h"
#include "core/shape_ops.h"
#include "data/images/pnm.h"
#include "nn/attention_rollout.h"

namespace uwaga::apps {
namespace {

using cxxopts::value;

void common_flags(cxxopts::Options& o) {
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-pose train", value<std::string>())
      ("index", "use validation sample N", value<std::int64_t>())
      ("image", "a PGM (grey) or PPM (colour) crop of the model's input size, also given as an "
                "argument without the flag", value<std::vector<std::string>>())
      ("out", "the file to write (required)", value<std::string>())
      ("h,help", "show this help");
  add_pose_data_flags(o, "where the run found them");
  add_threads_option(o, "1");
  o.parse_positional({"image"});
  o.positional_help("[IMAGE]");
  o.show_positional_help();
}

// How to turn a picture into what the model reads.
std::string conversion_hint(const nn::PoseConfig& m) {
  const std::string geometry = std::to_string(m.image_width) + "x" + std::to_string(m.image_height);
  const char* kind = m.channels == 1 ? "gray PGM" : "colour PPM";
  const bool grey = m.channels == 1;
  return "crop the person and convert it to a " + geometry + " (width x height) " + kind +
         ", e.g. with ImageMagick: convert photo.png" + (grey ? " -colorspace Gray" : "") +
         " -resize '" + geometry + "!' crop." + (grey ? "pgm" : "ppm");
}

PoseImage read_image_file(const std::string& path, const nn::PoseConfig& m, const char* mode) {
  ImageDataset file;
  try {
    file = read_pnm(path);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find("is not a PGM or PPM") == std::string::npos) throw;
    fail(what, "; ", conversion_hint(m));
  }
  if (file.channels != m.channels || file.height != m.image_height || file.width != m.image_width)
    fail(mode, ": '", path, "' is ", file.channels, "x", file.height, "x", file.width,
         " but the model reads ", m.channels, "x", m.image_height, "x", m.image_width,
         " (channels x height x width); ", conversion_hint(m));
  std::vector<double> pixels(file.pixels.begin(), file.pixels.end());
  for (double& p : pixels) p /= 255.0;
  return {path, Tensor::from_vector(pixels, {m.channels, m.image_height, m.image_width}), {}};
}

// The crop a file (--image FILE, or FILE alone) or --index names (exactly one of them).
PoseImage image_from_flags(const cxxopts::ParseResult& r, const PoseRunConfig& run,
                           const char* mode) {
  const std::vector<std::string> files = positional_arguments(r, "image");
  if (files.size() + r.count("index") != 1)
    fail(mode, ": give one crop: --image FILE.pgm or --index N (a validation sample)");
  if (!files.empty() && (r.count("coco-annotations") || r.count("data-dir")))
    fail(mode, ": --coco-annotations and --data-dir say where --index N takes its validation "
         "sample from; with --image they have nothing to do");
  if (!files.empty()) return read_image_file(files[0], run.model, mode);
  const std::int64_t index = r["index"].as<std::int64_t>();
  if (index < 0 || index >= run.valid_size)
    fail(mode, ": --index ", index, " is out of range: the run has ", run.valid_size,
         " validation samples");
  PoseRunConfig one = run;  // validation sample `index` is the same whatever the set's size
  one.valid_size = index + 1;
  apply_pose_data_flags(r, one);
  const PoseData data(one);
  PoseSample s = data.valid.sample(index);
  Tensor image = s.image;
  return {"validation sample " + std::to_string(index), image, std::move(s)};
}

struct Prediction {
  Tensor heatmaps;  // (K, h, w)
  nn::DecodedKeypoints joints;
};

Prediction predict(nn::VitPose& model, const PoseImage& im) {
  const nn::PoseConfig& m = model.config;
  const Tensor batch = reshape(im.image, {1, m.channels, m.image_height, m.image_width});
  Tensor heatmaps = model.forward(batch);  // (1, K, h, w)
  heatmaps = reshape(heatmaps, {m.joints, m.heatmap_height(), m.heatmap_width()});
  return {heatmaps, nn::decode_heatmaps(heatmaps, m.heatmap_stride())};
}

std::string required_out(const cxxopts::ParseResult& r, const char* mode,
                         const char* kind = "svg") {
  if (!r.count("out")) fail(mode, ": --out FILE.", kind, " is required");
  return r["out"].as<std::string>();
}

// The token whose patch holds the point (x, y), clamped into the grid: r·(W/P) + c.
std::int64_t token_at(const nn::PoseConfig& m, float x, float y) {
  auto cell = [&](float v, std::int64_t cells) {
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor(v / m.patch)), 0,
                                    cells - 1);
  };
  return cell(y, m.grid_height()) * m.grid_width() + cell(x, m.grid_width());
}

std::string patch_name(const nn::PoseConfig& m, std::int64_t n) {
  return "patch (" + std::to_string(n / m.grid_width() + 1) + ", " +
         std::to_string(n % m.grid_width() + 1) + ")";
}

}  // namespace

int pose_predict(int argc, char** argv) {
  cxxopts::Options o("uwaga-pose predict",
                     "Predict the joints of one crop: their positions and scores, and an SVG of "
                     "the skeleton and each joint's heatmap.");
  common_flags(o);
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "predict", "image");
  if (!r.count("checkpoint")) fail("predict: --checkpoint FILE is required");
  const std::string out = required_out(r, "predict");
  set_threads_from_option(r, "uwaga-pose", false);
  LoadedPose pose = load_pose(r["checkpoint"].as<std::string>());
  const PoseImage im = image_from_flags(r, pose.run, "predict");
  const SkeletonSpec& skeleton = pose_skeleton(pose.run);

  NoGradGuard no_grad;
  const Prediction p = predict(*pose.model, im);
  std::printf("%s:\n  %-14s %7s %7s %6s", im.name.c_str(), "joint", "x", "y", "score");
  if (im.truth) std::printf("  %7s %7s %7s", "true x", "true y", "error");
  std::printf("\n");
  for (std::int64_t k = 0; k < pose.model->config.joints; ++k) {
    std::printf("  %-14s %7.2f %7.2f %6.3f", skeleton.joint_names[k].c_str(), p.joints.x[k],
                p.joints.y[k], p.joints.score[k]);
    if (im.truth) {
      const PoseSample& t = *im.truth;
      std::printf("  %7.2f %7.2f %7.2f%s", t.x[k], t.y[k],
                  std::hypot(p.joints.x[k] - t.x[k], p.joints.y[k] - t.y[k]),
                  t.visible[k] ? "" : " (hidden)");
    }
    std::printf("\n");
  }
  prediction_svg(im, p.joints, p.heatmaps, skeleton).save(out);
  std::printf("skeleton and heatmaps drawn in %s\n", out.c_str());
  return 0;
}

int pose_attention(int argc, char** argv) {
  cxxopts::Options o("uwaga-pose attention",
                     "Draw where the token under one predicted joint attends, in every layer "
                     "and head, over the patch grid (SVG).");
  common_flags(o);
  o.add_options()("joint", "the joint's name (e.g. left_wrist; a wrong name lists them)",
                  value<std::string>());
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "attention", "image");
  if (!r.count("checkpoint")) fail("attention: --checkpoint FILE is required");
  const std::string out = required_out(r, "attention");
  if (!r.count("joint")) fail("attention: --joint NAME is required");
  set_threads_from_option(r, "uwaga-pose", false);
  LoadedPose pose = load_pose(r["checkpoint"].as<std::string>());
  const SkeletonSpec& skeleton = pose_skeleton(pose.run);
  const std::string joint = r["joint"].as<std::string>();
  const auto found = std::find(skeleton.joint_names.begin(), skeleton.joint_names.end(), joint);
  if (found == skeleton.joint_names.end()) {
    std::string names;
    for (const std::string& n : skeleton.joint_names) names += (names.empty() ? "" : ", ") + n;
    fail("attention: --joint '", joint, "' is not a joint of this model; expected one of: ", names);
  }
  const std::int64_t k = found - skeleton.joint_names.begin();
  const PoseImage im = image_from_flags(r, pose.run, "attention");

  NoGradGuard no_grad;
  pose.model->keep_attention(true);
  const Prediction p = predict(*pose.model, im);
  const nn::PoseConfig& m = pose.model->config;
  const float x = p.joints.x[k], y = p.joints.y[k];
  const std::int64_t query = token_at(m, x, y);  // the token under the predicted joint
  attention_svg(im, pose.model->attention_maps(), query, m.grid_height(), m.grid_width(), joint, x,
                y)
      .save(out);
  std::printf("%s: %s predicted at (%.1f, %.1f), score %.3f; the attention of its token (%lld) "
              "in %lld layers drawn in %s\n",
              im.name.c_str(), joint.c_str(), x, y, p.joints.score[k], (long long)query,
              (long long)m.depth, out.c_str());
  return 0;
}

int pose_explore(int argc, char** argv) {
  cxxopts::Options o("uwaga-pose explore",
                     "Write one HTML page to explore every layer and head of the attention on one "
                     "crop: where the token under each predicted joint looks, over the patches, "
                     "and the full maps (self-contained: open it in any browser).");
  common_flags(o);
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "explore", "image");
  if (!r.count("checkpoint")) fail("explore: --checkpoint FILE is required");
  const std::string out = required_out(r, "explore", "html");
  set_threads_from_option(r, "uwaga-pose", false);
  const std::string checkpoint = r["checkpoint"].as<std::string>();
  LoadedPose pose = load_pose(checkpoint);
  const SkeletonSpec& skeleton = pose_skeleton(pose.run);
  const PoseImage im = image_from_flags(r, pose.run, "explore");

  NoGradGuard no_grad;
  pose.model->keep_attention(true);
  const Prediction p = predict(*pose.model, im);
  const std::vector<Tensor> maps = pose.model->attention_maps();  // per layer (1, h, N, N)
  const nn::PoseConfig& m = pose.model->config;
  const std::int64_t N = m.grid_height() * m.grid_width();
  std::vector<std::string> tokens;
  for (std::int64_t n = 0; n < N; ++n) tokens.push_back(patch_name(m, n));

  AttentionExplorer e;
  e.title = "uwaga-pose: attention on " + im.name;
  e.subtitle = checkpoint + "  ·  " + std::to_string(m.depth) + " layers × " +
               std::to_string(m.heads) + " heads, " + std::to_string(m.grid_height()) + " × " +
               std::to_string(m.grid_width()) + " patches of " + std::to_string(m.patch) + "×" +
               std::to_string(m.patch) + " pixels, no class token";
  e.notes = attention_explorer_basics();
  e.notes.push_back(
      "ViTPose has no class token: every patch's token is read out, laid out again as the patch "
      "grid, and a small decoder turns it into one heatmap per joint (nn/pose/vit_pose.h). So the "
      "rows that matter are the patches under the joints: the image section starts with the "
      "token under each predicted joint and shows which patches it gathers from — a wrist's "
      "token may look along the arm to the elbow and shoulder it hangs from.");
  e.notes.push_back(attention_rollout_note());
  AttentionFamily self;
  self.id = "self", self.name = "self-attention";
  self.about = "Rows: the patch whose token attends (query), row by row over the grid; columns: "
               "the patch attended to (key), in the same order.";
  self.queries = self.keys = tokens;
  self.layers = maps;
  e.families.push_back(self);
  ExplorerImage image;
  image.channels = m.channels, image.height = m.image_height, image.width = m.image_width;
  image.pixels = im.image.to_vector();
  image.grid_rows = m.grid_height(), image.grid_cols = m.grid_width();
  image.family = "self";
  image.queries.clear();
  for (std::int64_t k = 0; k < m.joints; ++k) {
    const std::int64_t n = token_at(m, p.joints.x[k], p.joints.y[k]);
    image.queries.push_back(n);
    image.query_names.push_back(skeleton.joint_names[k] + " (" + patch_name(m, n) + ")");
  }
  image.first_key = 0;  // key r·(W/P) + c is patch (r, c)
  image.self_key = -1;  // each query is a patch itself: no weight to single out
  image.rollout = nn::attention_rollout(maps);  // (1, N, N)
  e.image = image;
  save_attention_explorer(e, out);
  std::printf("%s: the tokens under the %lld predicted joints; %lld layers x %lld heads written "
              "to %s (open it in a browser)\n",
              im.name.c_str(), (long long)m.joints, (long long)m.depth, (long long)m.heads,
              out.c_str());
  return 0;
}

}  // namespace uwaga::apps
