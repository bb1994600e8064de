// The synthetic stick figures: the same bytes for the same seed (on any thread, in any order),
// joints inside the frame, the kinematic chain's lengths and angle limits read back from the
// joints, occluders hiding exactly the joints marked invisible, left and right limbs at their grey
// levels, and settings out of range refused.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <thread>
#include <vector>

#include "core/error.h"
#include "data/pose/stick_figures.h"

using namespace uwaga;
using Catch::Contains;

namespace {

enum {
  kHead, kNeck, kLShoulder, kRShoulder, kLElbow, kRElbow, kLWrist, kRWrist, kPelvis, kLHip, kRHip,
  kLKnee, kRKnee, kLAnkle, kRAnkle
};

// FNV-1a over the image's bytes, the joints and the two scales of a sample.
std::uint64_t sample_hash(const PoseSample& s, std::uint64_t h = 14695981039346656037ull) {
  auto add = [&](const void* data, std::size_t n) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  };
  add(s.image.data<float>(), static_cast<std::size_t>(s.image.numel()) * sizeof(float));
  add(s.x.data(), s.x.size() * sizeof(float));
  add(s.y.data(), s.y.size() * sizeof(float));
  add(s.visible.data(), s.visible.size());
  add(&s.area, sizeof s.area);
  add(&s.torso, sizeof s.torso);
  return h;
}

std::uint64_t set_hash(const StickFigures& figures, std::int64_t n) {
  std::uint64_t h = 14695981039346656037ull;
  for (std::int64_t i = 0; i < n; ++i) h = sample_hash(figures.sample(i), h);
  return h;
}

// The direction from joint a to joint b, in degrees from straight up, clockwise on screen.
double heading(const PoseSample& s, int a, int b) {
  return std::atan2(s.x[b] - s.x[a], -(s.y[b] - s.y[a])) * 180 / std::numbers::pi;
}

double wrap(double degrees) {
  while (degrees > 180) degrees -= 360;
  while (degrees <= -180) degrees += 360;
  return degrees;
}

double distance(const PoseSample& s, int a, int b) {
  return std::hypot(s.x[b] - s.x[a], s.y[b] - s.y[a]);
}

// The joint angles of a figure, read back from its joints as stick_figures.h defines them.
struct Angles {
  double neck;
  double shoulder[2], elbow[2], hip[2], knee[2];  // [0] left, [1] right
};

Angles angles_of(const PoseSample& s) {
  Angles a{};
  const double up = heading(s, kPelvis, kNeck), down = up + 180;
  a.neck = wrap(heading(s, kNeck, kHead) - up);
  for (int side = 0; side < 2; ++side) {
    const double sign = side == 0 ? 1 : -1;  // the left limbs turn the other way round
    const int shoulder = kLShoulder + side, elbow = kLElbow + side, wrist = kLWrist + side;
    const int hip = kLHip + side, knee = kLKnee + side, ankle = kLAnkle + side;
    const double upper = heading(s, shoulder, elbow), fore = heading(s, elbow, wrist);
    const double thigh = heading(s, hip, knee), shin = heading(s, knee, ankle);
    a.shoulder[side] = sign * wrap(down - upper);
    a.elbow[side] = sign * wrap(fore - upper);
    a.hip[side] = sign * wrap(down - thigh);
    a.knee[side] = sign * wrap(thigh - shin);
  }
  return a;
}

// Tracks the smallest and largest value of one angle over many figures.
struct Span {
  double lo = 1e9, hi = -1e9;
  void add(double v) { lo = std::min(lo, v), hi = std::max(hi, v); }
};

double median(std::vector<double> v) {
  REQUIRE(!v.empty());
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

float pixel(const PoseSample& s, double x, double y) {
  const auto W = s.image.size(2);
  const auto j = static_cast<std::int64_t>(std::floor(x)),
             i = static_cast<std::int64_t>(std::floor(y));
  return s.image.data<float>()[i * W + j];
}

}  // namespace

TEST_CASE("stick figures: the same seed gives the same bytes, another seed other figures",
          "[data][stick_figures]") {
  const StickFigureConfig config;
  const StickFigures a(config, 1000, 7), b(config, 1000, 7), c(config, 1000, 8);
  REQUIRE(set_hash(a, 50) == set_hash(b, 50));
  REQUIRE(set_hash(a, 50) != set_hash(c, 50));
  for (std::int64_t i = 0; i < 50; ++i) {
    CHECK(sample_hash(a.sample(i)) != sample_hash(c.sample(i)));
    CHECK(sample_hash(a.sample(i)) != sample_hash(a.sample(i + 1)));
  }
  // Image i depends on i alone: made out of order, and on two threads at once, it is the same.
  const std::uint64_t alone = sample_hash(b.sample(999));
  std::vector<std::uint64_t> threaded(40);
  auto work = [&](int start) {
    for (int i = start; i < 40; i += 2)
      threaded[static_cast<std::size_t>(i)] = sample_hash(a.sample(i));
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  for (int i = 0; i < 40; ++i)
    CHECK(threaded[static_cast<std::size_t>(i)] == sample_hash(b.sample(i)));
  CHECK(sample_hash(a.sample(999)) == alone);
  // The same configuration at another size draws other pixels but the same pose, scaled.
  StickFigureConfig big = config;
  big.height = 256, big.width = 192;
  const PoseSample small_one = a.sample(3), big_one = StickFigures(big, 1000, 7).sample(3);
  CHECK(big_one.image.shape() == Shape{1, 256, 192});
  CHECK(angles_of(big_one).elbow[0] == Approx(angles_of(small_one).elbow[0]).margin(0.01));
}

TEST_CASE("stick figures: a grey image with every joint inside, the figure filling the frame",
          "[data][stick_figures]") {
  const StickFigureConfig config;
  const StickFigures figures(config, 100000, 1);
  REQUIRE(figures.size() == 100000);
  REQUIRE(figures.skeleton().num_joints() == 15);
  const float H = 64, W = 48;
  for (std::int64_t i = 0; i < 300; ++i) {
    const PoseSample s = figures.sample(i);
    REQUIRE(s.image.shape() == Shape{1, 64, 48});
    check_pose_sample(s, figures.skeleton(), "sample");
    const std::vector<double> v = s.image.to_vector();
    REQUIRE(*std::min_element(v.begin(), v.end()) >= 0.0);
    REQUIRE(*std::max_element(v.begin(), v.end()) <= 1.0);
    for (int j = 0; j < 15; ++j) {
      INFO("image " << i << ", joint " << j << " at (" << s.x[j] << ", " << s.y[j] << ")");
      REQUIRE((s.x[j] >= 1 && s.x[j] <= W - 1 && s.y[j] >= 1 && s.y[j] <= H - 1));
    }
    const auto [x0, x1] = std::minmax_element(s.x.begin(), s.x.end());
    const auto [y0, y1] = std::minmax_element(s.y.begin(), s.y.end());
    CHECK(s.area == Approx((*x1 - *x0) * (*y1 - *y0)));
    CHECK(s.torso == Approx(distance(s, kNeck, kPelvis)));
    // Like a person box: the joints span at least 40 % of the frame one way or the other.
    CHECK(std::max((*x1 - *x0) / W, (*y1 - *y0) / H) > 0.4);
  }
}

TEST_CASE("stick figures: limb lengths and joint angles stay within their limits",
          "[data][stick_figures]") {
  StickFigureConfig config;
  SECTION("the default limits") {}
  SECTION("narrow limits") {
    config.neck = {5, 10};
    config.shoulder = {-10, 0};
    config.elbow = {100, 110};
    config.hip = {20, 25};
    config.knee = {60, 62};
    config.max_rotation_deg = 0;
  }
  const StickFigures figures(config, 2000, 3);
  const double jitter = config.limb_length_jitter, tolerance = 0.01;  // degrees
  Span neck, shoulder, elbow, hip, knee, rotation;
  auto within = [&](double v, AngleRange r) {
    return v >= r.min - tolerance && v <= r.max + tolerance;
  };
  for (std::int64_t i = 0; i < 2000; ++i) {
    const PoseSample s = figures.sample(i);
    const Angles a = angles_of(s);
    INFO("image " << i);
    REQUIRE(within(a.neck, config.neck));
    neck.add(a.neck);
    rotation.add(heading(s, kPelvis, kNeck));
    for (int side = 0; side < 2; ++side) {
      REQUIRE(within(a.shoulder[side], config.shoulder));
      REQUIRE(within(a.elbow[side], config.elbow));
      REQUIRE(within(a.hip[side], config.hip));
      REQUIRE(within(a.knee[side], config.knee));
      shoulder.add(a.shoulder[side]), elbow.add(a.elbow[side]);
      hip.add(a.hip[side]), knee.add(a.knee[side]);
      // Shoulders and hips sit square across the torso; limbs have their lengths ± the jitter.
      const double t = s.torso;
      CHECK(distance(s, kNeck, kLShoulder + side) == Approx(0.35 * t).epsilon(1e-4));
      CHECK(distance(s, kPelvis, kLHip + side) == Approx(0.22 * t).epsilon(1e-4));
      CHECK(wrap(heading(s, kNeck, kLShoulder + side) - heading(s, kPelvis, kNeck)) ==
            Approx(side == 0 ? 90 : -90).margin(tolerance));
      const std::pair<int, double> limbs[] = {{kLElbow, 0.55}, {kLWrist, 0.5}, {kLKnee, 0.72},
                                              {kLAnkle, 0.65}};
      const int parents[] = {kLShoulder, kLElbow, kLHip, kLKnee};
      for (int k = 0; k < 4; ++k) {
        const double length = distance(s, parents[k] + side, limbs[k].first + side) / t;
        CHECK(length >= limbs[k].second * (1 - jitter) - 1e-4);
        CHECK(length <= limbs[k].second * (1 + jitter) + 1e-4);
      }
    }
  }
  // The angles fill their ranges, not just a corner of them.
  auto fills = [](const Span& s, AngleRange r) {
    const double slack = 0.1 * (r.max - r.min) + 1e-3;
    return s.lo <= r.min + slack && s.hi >= r.max - slack;
  };
  CHECK(fills(neck, config.neck));
  CHECK(fills(shoulder, config.shoulder));
  CHECK(fills(elbow, config.elbow));
  CHECK(fills(hip, config.hip));
  CHECK(fills(knee, config.knee));
  CHECK(fills(rotation, {-config.max_rotation_deg, config.max_rotation_deg}));
}

TEST_CASE("stick figures: occluders hide exactly the joints marked invisible",
          "[data][stick_figures]") {
  StickFigureConfig config;
  config.noise_std = 0;
  const StickFigures figures(config, 1000, 5);
  int occluded_images = 0, two_hidden = 0;
  for (std::int64_t i = 0; i < 1000; ++i) {
    const StickFigureScene scene = figures.scene(i);
    const PoseSample s = figures.sample(i);
    REQUIRE(s.visible == scene.visible);
    REQUIRE(s.x == scene.x);
    int hidden = 0;
    for (int j = 0; j < 15; ++j) {
      const StickFigureScene::Rect* cover = nullptr;
      for (const auto& r : scene.occluders)
        if (s.x[j] >= r.x0 && s.x[j] <= r.x1 && s.y[j] >= r.y0 && s.y[j] <= r.y1) cover = &r;
      INFO("image " << i << ", joint " << j);
      REQUIRE((cover != nullptr) == (s.visible[j] == 0));
      if (cover) {
        ++hidden;
        // The pixel under the joint shows the occluder, not the figure.
        CHECK(pixel(s, s.x[j], s.y[j]) == Approx(cover->grey).margin(1e-6));
      }
    }
    REQUIRE(hidden <= 2);
    REQUIRE(hidden == static_cast<int>(scene.occluders.size()));
    occluded_images += hidden > 0;
    two_hidden += hidden == 2;
  }
  // occlusion_probability 0.5, then one or two occluders.
  CHECK(occluded_images > 400);
  CHECK(occluded_images < 600);
  CHECK(two_hidden > 150);

  config.occlusion_probability = 0;
  const StickFigures clear(config, 100, 5);
  for (std::int64_t i = 0; i < 100; ++i) {
    const PoseSample s = clear.sample(i);
    REQUIRE(std::count(s.visible.begin(), s.visible.end(), 1) == 15);
  }
}

TEST_CASE("stick figures: left and right limbs are drawn at their own grey levels",
          "[data][stick_figures]") {
  StickFigureConfig config;
  config.noise_std = 0;
  config.max_distractors = 0;
  config.occlusion_probability = 0;
  REQUIRE(std::abs(config.left_grey - config.right_grey) >= 0.2f);
  const StickFigures figures(config, 200, 9);
  std::vector<double> left, right, body;
  for (std::int64_t i = 0; i < 200; ++i) {
    const PoseSample s = figures.sample(i);
    auto middle = [&](int a, int b) {
      return pixel(s, (s.x[a] + s.x[b]) / 2, (s.y[a] + s.y[b]) / 2);
    };
    for (const auto& [a, b] : {std::pair{kLShoulder, kLElbow}, {kLElbow, kLWrist}, {kLHip, kLKnee},
                               {kLKnee, kLAnkle}})
      left.push_back(middle(a, b));
    for (const auto& [a, b] : {std::pair{kRShoulder, kRElbow}, {kRElbow, kRWrist}, {kRHip, kRKnee},
                               {kRKnee, kRAnkle}})
      right.push_back(middle(a, b));
    body.push_back(middle(kNeck, kPelvis));
  }
  // Medians: where limbs cross, the one drawn last shows.
  CHECK(median(left) == Approx(config.left_grey).margin(0.05));
  CHECK(median(right) == Approx(config.right_grey).margin(0.05));
  CHECK(median(body) == Approx(config.body_grey).margin(0.05));

  // Swapped levels draw the same figures with swapped limbs.
  std::swap(config.left_grey, config.right_grey);
  const PoseSample swapped = StickFigures(config, 200, 9).sample(0);
  const PoseSample plain = figures.sample(0);
  CHECK(swapped.x == plain.x);
  CHECK(sample_hash(swapped) != sample_hash(plain));
}

TEST_CASE("stick figures: settings out of range and images out of range are refused",
          "[data][stick_figures]") {
  auto refused = [](auto change, const std::string& message) {
    StickFigureConfig c;
    change(c);
    CHECK_THROWS_WITH(StickFigures(c, 10, 0), Contains(message));
  };
  refused([](StickFigureConfig& c) { c.height = 8; }, "an image of 8 x 48 is too small");
  refused([](StickFigureConfig& c) { c.width = 0; }, "width must be positive");
  refused([](StickFigureConfig& c) { c.right_grey = 0.9f; },
          "left_grey 1 and right_grey 0.9 should differ by at least 0.2");
  refused([](StickFigureConfig& c) { c.body_grey = 1.5f; }, "body_grey 1.5 should lie in [0, 1]");
  refused([](StickFigureConfig& c) { c.elbow = {90, 10}; }, "the elbow range [90, 10]");
  refused([](StickFigureConfig& c) { c.knee = {0, 180}; }, "the knee range [0, 180]");
  refused([](StickFigureConfig& c) { c.max_fill = 1.5; }, "the fill range [0.65, 1.5]");
  refused([](StickFigureConfig& c) { c.max_occluded_joints = 3; }, "max_occluded_joints 3");
  refused([](StickFigureConfig& c) { c.noise_std = std::nan(""); }, "noise_std nan");
  CHECK_THROWS_WITH(StickFigures(StickFigureConfig{}, 0, 0), Contains("count must be positive"));
  const StickFigures figures(StickFigureConfig{}, 10, 0);
  CHECK_THROWS_WITH(figures.sample(10), Contains("image 10 is out of range (10 images)"));
  CHECK_THROWS_WITH(figures.sample(-1), Contains("image -1 is out of range"));
}
