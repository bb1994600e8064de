#include "apps/pose/pose_pictures.h"

#include <algorithm>
#include <cstdio>

#include "core/shape_ops.h"

namespace uwaga::apps {
namespace {

const Rgb kLeft = {255, 127, 14}, kRight = {31, 119, 180}, kCentre = {44, 160, 44},
          kTruth = {214, 39, 40}, kQuery = {255, 0, 0};
constexpr double kPanel = 192;  // the crop's height on the page
constexpr double kGap = 20;

// The image (C, H, W), channels averaged, row-major H × W in [0, 1].
std::vector<double> grey(const Tensor& image) {
  const std::int64_t C = image.size(0), HW = image.size(1) * image.size(2);
  const std::vector<double> v = image.to_vector();
  std::vector<double> out(static_cast<std::size_t>(HW), 0.0);
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t i = 0; i < HW; ++i) out[i] += v[c * HW + i] / static_cast<double>(C);
  return out;
}

// -1 for a joint named first in a flip pair (the figure's left), 1 for one named second, else 0.
std::vector<int> joint_sides(const SkeletonSpec& skeleton) {
  std::vector<int> side(static_cast<std::size_t>(skeleton.num_joints()), 0);
  for (auto [left, right] : skeleton.flip_pairs) side[left] = -1, side[right] = 1;
  return side;
}

Rgb side_colour(int side) { return side < 0 ? kLeft : side > 0 ? kRight : kCentre; }

std::string percent(double v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * v);
  return buf;
}

}  // namespace

SvgCanvas prediction_svg(const PoseImage& im, const nn::DecodedKeypoints& joints,
                         const Tensor& heatmaps, const SkeletonSpec& skeleton) {
  const std::int64_t H = im.image.size(1), W = im.image.size(2);
  const std::int64_t K = heatmaps.size(0), h = heatmaps.size(1), w = heatmaps.size(2);
  const double cell = kPanel / static_cast<double>(H), panel_w = cell * static_cast<double>(W);
  const std::vector<double> pixels = grey(im.image);
  // The crop, large, then the K heatmaps small, in rows of 5.
  const double small = 0.5, small_w = panel_w * small, small_h = kPanel * small;
  const std::int64_t columns = 5, rows = (K + columns - 1) / columns;
  const double width = kGap + panel_w + kGap + columns * (small_w + kGap);
  const double height = 50 + std::max(kPanel + 40, rows * (small_h + 30.0));
  SvgCanvas svg(width, height);
  svg.text(kGap, 24, im.name + ": predicted skeleton" +
                         (im.truth ? " (true joints: red crosses)" : "") + " and joint heatmaps",
           14);

  const double x0 = kGap, y0 = 40;
  svg.begin_definition("crop");  // drawn once, shown under every panel
  svg.gray_image(0, 0, pixels, H, W, cell);
  svg.end_definition();
  svg.use("crop", x0, y0);
  auto px = [&](double x) { return x0 + x * cell; };
  auto py = [&](double y) { return y0 + y * cell; };
  const std::vector<int> side = joint_sides(skeleton);
  svg.begin_group("skeleton");
  for (auto [a, b] : skeleton.bones)
    svg.line(px(joints.x[a]), py(joints.y[a]), px(joints.x[b]), py(joints.y[b]),
             side_colour(side[a] ? side[a] : side[b]), 2.5);
  for (std::int64_t k = 0; k < K; ++k) svg.circle(px(joints.x[k]), py(joints.y[k]), 3.5,
                                                   side_colour(side[k]));
  svg.end_group();
  if (im.truth) {
    svg.begin_group("truth");
    const PoseSample& t = *im.truth;
    for (std::int64_t k = 0; k < K; ++k) {
      if (!t.visible[k]) continue;
      const double cx = px(t.x[k]), cy = py(t.y[k]);
      svg.line(cx - 4, cy - 4, cx + 4, cy + 4, kTruth, 1.5);
      svg.line(cx - 4, cy + 4, cx + 4, cy - 4, kTruth, 1.5);
    }
    svg.end_group();
  }

  const double hx = x0 + panel_w + kGap;
  for (std::int64_t k = 0; k < K; ++k) {
    const double x = hx + static_cast<double>(k % columns) * (small_w + kGap);
    const double y = y0 + static_cast<double>(k / columns) * (small_h + 30);
    const std::vector<double> map = reshape(slice(heatmaps, 0, k, k + 1), {h * w}).to_vector();
    svg.begin_group("heatmap-" + skeleton.joint_names[k]);
    svg.use("crop", x, y, small);
    svg.heatmap(x, y, map, h, w, small_w / static_cast<double>(w),
                small_h / static_cast<double>(h), 0.7);
    svg.end_group();
    svg.text(x + small_w / 2, y + small_h + 14,
             skeleton.joint_names[k] + " " + percent(joints.score[k]), 10, "middle");
  }
  return svg;
}

SvgCanvas attention_svg(const PoseImage& im, const std::vector<Tensor>& maps, std::int64_t query,
                        std::int64_t grid_height, std::int64_t grid_width,
                        const std::string& joint, float x, float y) {
  const std::int64_t H = im.image.size(1), W = im.image.size(2);
  const std::int64_t layers = static_cast<std::int64_t>(maps.size());
  const std::int64_t heads = layers ? maps[0].size(1) : 0, N = grid_height * grid_width;
  const double scale = 0.6, cell = scale * kPanel / static_cast<double>(H);
  const double panel_w = cell * static_cast<double>(W), panel_h = scale * kPanel;
  const double patch_w = panel_w / static_cast<double>(grid_width),
               patch_h = panel_h / static_cast<double>(grid_height);
  const std::int64_t columns = heads + 2;  // the crop, each head, the mean
  SvgCanvas svg(kGap + columns * (panel_w + kGap), 70 + layers * (panel_h + 30));
  const std::vector<double> pixels = grey(im.image);
  svg.begin_definition("crop");  // drawn once, shown under every panel
  svg.gray_image(0, 0, pixels, H, W, cell);
  svg.end_definition();
  const std::int64_t row = query / grid_width, column = query % grid_width;
  char where[96];
  std::snprintf(where, sizeof where, " at (%.1f, %.1f), patch row %lld, column %lld", x, y,
                (long long)row, (long long)column);
  svg.text(kGap, 24, im.name + ": where the token under " + joint + where + " attends", 14);
  svg.text(kGap, 44, "one row per layer: the query patch (red), then its attention row over the "
                     "patches for each head and their mean", 11);
  for (std::int64_t l = 0; l < layers; ++l) {
    const double top = 60 + static_cast<double>(l) * (panel_h + 30);
    const Tensor& A = maps[static_cast<std::size_t>(l)];  // (1, h, N, N)
    std::vector<double> mean(static_cast<std::size_t>(N), 0.0);
    for (std::int64_t c = 0; c < columns; ++c) {
      const double left = kGap + static_cast<double>(c) * (panel_w + kGap);
      svg.use("crop", left, top);
      std::string title;
      if (c == 0) {
        svg.rect(left + column * patch_w, top + row * patch_h, patch_w, patch_h, kQuery, 0.5);
        title = "layer " + std::to_string(l + 1);
      } else if (c <= heads) {
        std::vector<double> a(static_cast<std::size_t>(N));
        for (std::int64_t n = 0; n < N; ++n) {
          a[n] = A.at({0, c - 1, query, n});
          mean[n] += a[n] / static_cast<double>(heads);
        }
        svg.heatmap(left, top, a, grid_height, grid_width, patch_w, patch_h, 0.7);
        title = "head " + std::to_string(c);
      } else {
        svg.heatmap(left, top, mean, grid_height, grid_width, patch_w, patch_h, 0.7);
        title = "mean of heads";
      }
      svg.text(left + panel_w / 2, top + panel_h + 14, title, 11, "middle");
    }
  }
  return svg;
}

}  // namespace uwaga::apps
