#include "data/pose/stick_figures.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "core/random.h"
#include "data/images/augment.h"

namespace uwaga {
namespace {

// The joints, in stick_figure_skeleton()'s order.
enum Joint {
  kHead, kNeck, kLeftShoulder, kRightShoulder, kLeftElbow, kRightElbow, kLeftWrist, kRightWrist,
  kPelvis, kLeftHip, kRightHip, kLeftKnee, kRightKnee, kLeftAnkle, kRightAnkle, kJoints
};

// The figure's proportions, in units of its torso (pelvis to neck).
constexpr double kHeadLength = 0.38, kHeadRadius = 0.2;
constexpr double kShoulderHalfWidth = 0.35, kHipHalfWidth = 0.22;
constexpr double kUpperArm = 0.55, kForearm = 0.5, kThigh = 0.72, kShin = 0.65;
constexpr double kStrokeRadius = 0.07;
constexpr float kMinStrokeRadius = 0.75f;  // pixels: thinner strokes would fade into the noise
// Salt for derive_seed, so these streams differ from other users of the same seed.
constexpr std::uint64_t kStickFigureStream = 0x5354494b46494755ull;  // "STIKFIGU"

struct Vec {
  double x = 0, y = 0;
};
Vec operator+(Vec a, Vec b) { return {a.x + b.x, a.y + b.y}; }
Vec operator*(Vec a, double s) { return {a.x * s, a.y * s}; }

// The unit vector at `degrees` from straight up, clockwise on screen (image y points down).
Vec direction(double degrees) {
  const double r = degrees * std::numbers::pi / 180;
  return {std::sin(r), -std::cos(r)};
}

double uniform(Generator& gen, double lo, double hi) { return lo + (hi - lo) * gen.uniform(); }
double uniform(Generator& gen, AngleRange range) { return uniform(gen, range.min, range.max); }

// The joints in torso units, pelvis at the origin.
std::vector<Vec> draw_pose(const StickFigureConfig& c, Generator& gen) {
  std::vector<Vec> j(kJoints);
  const double up = uniform(gen, -c.max_rotation_deg, c.max_rotation_deg);
  const double down = up + 180;
  j[kPelvis] = {0, 0};
  j[kNeck] = direction(up);
  j[kHead] = j[kNeck] + direction(up + uniform(gen, c.neck)) * kHeadLength;
  const Vec across = direction(up + 90);  // toward the figure's left
  auto length = [&](double base) {
    return base * uniform(gen, 1 - c.limb_length_jitter, 1 + c.limb_length_jitter);
  };
  for (const double side : {1.0, -1.0}) {  // left, right
    const bool left = side > 0;
    const int shoulder = left ? kLeftShoulder : kRightShoulder;
    const int elbow = left ? kLeftElbow : kRightElbow, wrist = left ? kLeftWrist : kRightWrist;
    const int hip = left ? kLeftHip : kRightHip, knee = left ? kLeftKnee : kRightKnee;
    const int ankle = left ? kLeftAnkle : kRightAnkle;
    j[shoulder] = j[kNeck] + across * (side * kShoulderHalfWidth);
    const double upper_arm = down - side * uniform(gen, c.shoulder);
    j[elbow] = j[shoulder] + direction(upper_arm) * length(kUpperArm);
    j[wrist] = j[elbow] + direction(upper_arm + side * uniform(gen, c.elbow)) * length(kForearm);
    j[hip] = j[kPelvis] + across * (side * kHipHalfWidth);
    const double thigh = down - side * uniform(gen, c.hip);
    j[knee] = j[hip] + direction(thigh) * length(kThigh);
    j[ankle] = j[knee] + direction(thigh - side * uniform(gen, c.knee)) * length(kShin);
  }
  return j;
}

// Rectangles that each cover one joint (at least `inside` pixels from its edges) and keep every
// other joint at least `clear` pixels outside them.
void draw_occluders(const StickFigureConfig& c, Generator& gen, float torso,
                    StickFigureScene& scene) {
  constexpr float inside = 1.0f, clear = 1.0f;
  constexpr int kTries = 20;
  if (gen.uniform() >= c.occlusion_probability || c.max_occluded_joints == 0) return;
  const auto n =
      1 + static_cast<std::int64_t>(gen.below(static_cast<std::uint64_t>(c.max_occluded_joints)));
  const float min_side = std::max(3.0f, 0.3f * torso), max_side = std::max(4.0f, 0.7f * torso);
  for (std::int64_t k = 0; k < n; ++k) {
    std::vector<int> candidates;
    for (int i = 0; i < kJoints; ++i)
      if (scene.visible[i]) candidates.push_back(i);
    const int j = candidates[gen.below(candidates.size())];
    for (int attempt = 0; attempt < kTries; ++attempt) {
      const auto w = static_cast<float>(uniform(gen, min_side, max_side));
      const auto h = static_cast<float>(uniform(gen, min_side, max_side));
      StickFigureScene::Rect r;
      r.x0 = static_cast<float>(uniform(gen, scene.x[j] - w + inside, scene.x[j] - inside));
      r.y0 = static_cast<float>(uniform(gen, scene.y[j] - h + inside, scene.y[j] - inside));
      r.x1 = r.x0 + w;
      r.y1 = r.y0 + h;
      r.grey = static_cast<float>(uniform(gen, 0.15, 0.6));
      bool alone = true;
      for (int i = 0; i < kJoints && alone; ++i)
        alone = i == j || scene.x[i] < r.x0 - clear || scene.x[i] > r.x1 + clear ||
                scene.y[i] < r.y0 - clear || scene.y[i] > r.y1 + clear;
      if (alone) {
        scene.occluders.push_back(r);
        scene.visible[j] = 0;
        break;
      }
    }
  }
}

// ---- drawing (image (H, W), pixel (i, j) centred at (j + 0.5, i + 0.5)) --------------------

// A stroke of radius r around the segment (x0, y0)–(x1, y1), round-capped. A pixel is covered by
// clamp(r + 0.5 − d, 0, 1), d the distance from its centre to the segment: a one-pixel ramp at
// the edge, the antialiasing.
void draw_stroke(float* image, std::int64_t H, std::int64_t W, float x0, float y0, float x1,
                 float y1, float r, float grey) {
  const auto lo = [](float v) { return static_cast<std::int64_t>(std::floor(v)); };
  const std::int64_t j0 = std::max<std::int64_t>(0, lo(std::min(x0, x1) - r - 1));
  const std::int64_t j1 = std::min<std::int64_t>(W, lo(std::max(x0, x1) + r + 1) + 1);
  const std::int64_t i0 = std::max<std::int64_t>(0, lo(std::min(y0, y1) - r - 1));
  const std::int64_t i1 = std::min<std::int64_t>(H, lo(std::max(y0, y1) + r + 1) + 1);
  const float dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
  for (std::int64_t i = i0; i < i1; ++i) {
    float* row = image + i * W;  // (W,)
    const float py = static_cast<float>(i) + 0.5f - y0;
    for (std::int64_t j = j0; j < j1; ++j) {
      const float px = static_cast<float>(j) + 0.5f - x0;
      const float t = len2 > 0 ? std::clamp((px * dx + py * dy) / len2, 0.0f, 1.0f) : 0.0f;
      const float ex = px - t * dx, ey = py - t * dy;
      const float a = std::clamp(r + 0.5f - std::sqrt(ex * ex + ey * ey), 0.0f, 1.0f);
      row[j] += a * (grey - row[j]);
    }
  }
}

// A filled rectangle; an edge pixel is covered by the fraction of its area inside.
void draw_rect(float* image, std::int64_t H, std::int64_t W, const StickFigureScene::Rect& r) {
  const auto lo = [](float v) { return static_cast<std::int64_t>(std::floor(v)); };
  const std::int64_t j0 = std::max<std::int64_t>(0, lo(r.x0)), j1 = std::min(W, lo(r.x1) + 1);
  const std::int64_t i0 = std::max<std::int64_t>(0, lo(r.y0)), i1 = std::min(H, lo(r.y1) + 1);
  auto overlap = [](float a0, float a1, std::int64_t k) {
    return std::clamp(std::min(a1, static_cast<float>(k + 1)) - std::max(a0, static_cast<float>(k)),
                      0.0f, 1.0f);
  };
  for (std::int64_t i = i0; i < i1; ++i) {
    const float cy = overlap(r.y0, r.y1, i);
    for (std::int64_t j = j0; j < j1; ++j) {
      const float a = cy * overlap(r.x0, r.x1, j);
      image[i * W + j] += a * (r.grey - image[i * W + j]);
    }
  }
}

}  // namespace

void check_stick_figure_config(const StickFigureConfig& c) {
  const char* who = "stick figures";
  check_size_in_range(who, "height", c.height, 4096);
  check_size_in_range(who, "width", c.width, 4096);
  if (c.height < 16 || c.width < 16)
    fail(who, ": an image of ", c.height, " x ", c.width, " is too small (at least 16 x 16)");
  if (!(c.min_fill > 0 && c.min_fill <= c.max_fill && c.max_fill <= 1))
    fail(who, ": the fill range [", c.min_fill, ", ", c.max_fill, "] should lie in (0, 1]");
  if (!(c.max_rotation_deg >= 0 && c.max_rotation_deg <= 180))
    fail(who, ": max_rotation_deg ", c.max_rotation_deg, " should lie in [0, 180]");
  if (!(c.limb_length_jitter >= 0 && c.limb_length_jitter <= 0.5))
    fail(who, ": limb_length_jitter ", c.limb_length_jitter, " should lie in [0, 0.5]");
  const std::pair<const char*, AngleRange> ranges[] = {
      {"neck", c.neck}, {"shoulder", c.shoulder}, {"elbow", c.elbow}, {"hip", c.hip},
      {"knee", c.knee}};
  for (const auto& [name, r] : ranges)
    if (!(r.min > -180 && r.min <= r.max && r.max < 180))
      fail(who, ": the ", name, " range [", r.min, ", ", r.max,
           "] should satisfy -180 < min <= max < 180 (degrees)");
  const std::pair<const char*, float> greys[] = {{"body_grey", c.body_grey},
                                                 {"left_grey", c.left_grey},
                                                 {"right_grey", c.right_grey},
                                                 {"max_background_grey", c.max_background_grey}};
  for (const auto& [name, g] : greys)
    if (!(g >= 0 && g <= 1)) fail(who, ": ", name, " ", g, " should lie in [0, 1]");
  if (!(std::abs(c.left_grey - c.right_grey) >= 0.2f))
    fail(who, ": left_grey ", c.left_grey, " and right_grey ", c.right_grey,
         " should differ by at least 0.2, or left and right limbs look alike");
  if (!(c.noise_std >= 0 && c.noise_std <= 1))
    fail(who, ": noise_std ", c.noise_std, " should lie in [0, 1]");
  if (c.max_distractors < 0 || c.max_distractors > 100)
    fail(who, ": max_distractors ", c.max_distractors, " should lie in [0, 100]");
  if (!(c.occlusion_probability >= 0 && c.occlusion_probability <= 1))
    fail(who, ": occlusion_probability ", c.occlusion_probability, " should lie in [0, 1]");
  if (c.max_occluded_joints < 0 || c.max_occluded_joints > 2)
    fail(who, ": max_occluded_joints ", c.max_occluded_joints, " should lie in [0, 2]");
}

StickFigures::StickFigures(StickFigureConfig config, std::int64_t count, std::uint64_t seed)
    : config_(config), count_(count), seed_(seed) {
  check_stick_figure_config(config_);
  check_size_in_range("stick figures", "count", count, std::int64_t{1} << 40);
}

StickFigureScene StickFigures::scene(std::int64_t i) const {
  if (i < 0 || i >= count_)
    fail("stick figures: image ", i, " is out of range (", count_, " images)");
  const StickFigureConfig& c = config_;
  Generator gen(derive_seed(seed_, kStickFigureStream, static_cast<std::uint64_t>(i)));
  const std::vector<Vec> pose = draw_pose(c, gen);

  // The extent in torso units: the joints, the head disk, the strokes' width.
  double x0 = pose[kHead].x - kHeadRadius, x1 = pose[kHead].x + kHeadRadius;
  double y0 = pose[kHead].y - kHeadRadius, y1 = pose[kHead].y + kHeadRadius;
  for (const Vec& p : pose) {
    x0 = std::min(x0, p.x - kStrokeRadius), x1 = std::max(x1, p.x + kStrokeRadius);
    y0 = std::min(y0, p.y - kStrokeRadius), y1 = std::max(y1, p.y + kStrokeRadius);
  }
  // Scaled to fill part of the frame, less a one-pixel border for the antialiasing ramp, and
  // placed where it fits.
  const double H = static_cast<double>(c.height), W = static_cast<double>(c.width);
  const double scale =
      uniform(gen, c.min_fill, c.max_fill) * std::min((H - 2) / (y1 - y0), (W - 2) / (x1 - x0));
  const double ox = uniform(gen, 1 - x0 * scale, W - 1 - x1 * scale);
  const double oy = uniform(gen, 1 - y0 * scale, H - 1 - y1 * scale);

  StickFigureScene scene;
  for (const Vec& p : pose) {
    scene.x.push_back(static_cast<float>(ox + p.x * scale));
    scene.y.push_back(static_cast<float>(oy + p.y * scale));
  }
  scene.visible.assign(kJoints, 1);
  const auto torso = static_cast<float>(scale);  // the torso is one unit long
  scene.stroke_radius = std::max(kMinStrokeRadius, static_cast<float>(kStrokeRadius * scale));
  scene.head_radius = static_cast<float>(kHeadRadius * scale);
  scene.background = static_cast<float>(uniform(gen, 0, c.max_background_grey));

  const auto distractors = gen.below(static_cast<std::uint64_t>(c.max_distractors) + 1);
  for (std::uint64_t k = 0; k < distractors; ++k) {
    const Vec from{uniform(gen, 0, W), uniform(gen, 0, H)};
    const Vec to = from + direction(uniform(gen, 0, 360)) * (torso * uniform(gen, 0.4, 1.0));
    scene.distractors.push_back({static_cast<float>(from.x), static_cast<float>(from.y),
                                 static_cast<float>(to.x), static_cast<float>(to.y),
                                 static_cast<float>(uniform(gen, 0.3, 1.0))});
  }
  draw_occluders(c, gen, torso, scene);
  scene.noise_seed = gen.next_u64();
  return scene;
}

PoseSample StickFigures::render(const StickFigureScene& scene) const {
  const StickFigureConfig& c = config_;
  const std::int64_t H = c.height, W = c.width;
  if (scene.x.size() != kJoints || scene.y.size() != kJoints || scene.visible.size() != kJoints)
    fail("stick figures: a scene has ", scene.x.size(), " joints, expected ", int{kJoints});
  PoseSample out;
  out.image = Tensor::empty({1, H, W});
  float* image = out.image.data<float>();  // (H, W)
  std::fill(image, image + H * W, scene.background);
  const float r = scene.stroke_radius;
  for (const auto& s : scene.distractors)
    draw_stroke(image, H, W, s.x0, s.y0, s.x1, s.y1, r, s.grey);

  auto bone = [&](int a, int b, float grey) {
    draw_stroke(image, H, W, scene.x[a], scene.y[a], scene.x[b], scene.y[b], r, grey);
  };
  for (const auto& [a, b] : {std::pair{kNeck, kPelvis}, {kNeck, kHead},
                             {kLeftShoulder, kRightShoulder}, {kLeftHip, kRightHip}})
    bone(a, b, c.body_grey);
  // The head: a disk, drawn as a stroke of zero length.
  draw_stroke(image, H, W, scene.x[kHead], scene.y[kHead], scene.x[kHead], scene.y[kHead],
              scene.head_radius, c.body_grey);
  for (const auto& [a, b] : {std::pair{kRightShoulder, kRightElbow}, {kRightElbow, kRightWrist},
                             {kRightHip, kRightKnee}, {kRightKnee, kRightAnkle}})
    bone(a, b, c.right_grey);
  for (const auto& [a, b] : {std::pair{kLeftShoulder, kLeftElbow}, {kLeftElbow, kLeftWrist},
                             {kLeftHip, kLeftKnee}, {kLeftKnee, kLeftAnkle}})
    bone(a, b, c.left_grey);
  for (const auto& rect : scene.occluders) draw_rect(image, H, W, rect);

  Generator noise(scene.noise_seed);
  const auto sigma = static_cast<float>(c.noise_std);
  for (std::int64_t p = 0; p < H * W; ++p) {
    if (sigma > 0) image[p] += sigma * static_cast<float>(noise.normal());
    image[p] = std::clamp(image[p], 0.0f, 1.0f);
  }

  out.x = scene.x;
  out.y = scene.y;
  out.visible = scene.visible;
  const auto [xmin, xmax] = std::minmax_element(scene.x.begin(), scene.x.end());
  const auto [ymin, ymax] = std::minmax_element(scene.y.begin(), scene.y.end());
  out.area = (*xmax - *xmin) * (*ymax - *ymin);
  out.torso = std::hypot(scene.x[kNeck] - scene.x[kPelvis], scene.y[kNeck] - scene.y[kPelvis]);
  return out;
}

PoseSample StickFigures::sample(std::int64_t i) const { return render(scene(i)); }

}  // namespace uwaga
