// The two skeletons (COCO's and the stick figures') and the mirror-image augmentation.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "core/error.h"
#include "data/pose/keypoints.h"

using namespace uwaga;
using Catch::Contains;

namespace {

// Every flip pair is (left_X, right_X), every joint named left_ or right_ is in exactly one pair,
// and bones join valid joints.
void check_skeleton(const SkeletonSpec& s) {
  const auto k = s.num_joints();
  REQUIRE(static_cast<std::int64_t>(s.oks_sigmas.size()) == k);
  for (const auto& [a, b] : s.bones) {
    REQUIRE((a >= 0 && a < k && b >= 0 && b < k && a != b));
  }
  std::set<int> paired;
  for (const auto& [left, right] : s.flip_pairs) {
    const std::string& l = s.joint_names[static_cast<std::size_t>(left)];
    const std::string& r = s.joint_names[static_cast<std::size_t>(right)];
    INFO(l << " <-> " << r);
    REQUIRE(l.rfind("left_", 0) == 0);
    REQUIRE(r == "right_" + l.substr(5));
    REQUIRE(paired.insert(left).second);
    REQUIRE(paired.insert(right).second);
  }
  for (int j = 0; j < k; ++j) {
    const std::string& name = s.joint_names[static_cast<std::size_t>(j)];
    const bool sided = name.rfind("left_", 0) == 0 || name.rfind("right_", 0) == 0;
    CHECK(sided == (paired.count(j) == 1));
  }
}

}  // namespace

TEST_CASE("keypoints: COCO's skeleton is cocoapi's", "[data][keypoints]") {
  const SkeletonSpec& s = coco_skeleton();
  check_skeleton(s);
  REQUIRE(s.num_joints() == 17);
  REQUIRE(s.bones.size() == 19);
  REQUIRE(s.flip_pairs.size() == 8);
  CHECK(s.joint_names.front() == "nose");
  CHECK(s.joint_names.back() == "right_ankle");
  CHECK(s.joint(std::string("left_hip")) == 11);
  // cocoapi's sigmas: [.26 .25 .25 .35 .35 .79 .79 .72 .72 .62 .62 1.07 1.07 .87 .87 .89 .89]/10.
  CHECK(s.oks_sigmas[0] == Approx(0.026));
  CHECK(s.oks_sigmas[5] == Approx(0.079));
  CHECK(s.oks_sigmas[11] == Approx(0.107));
  CHECK(s.oks_sigmas[16] == Approx(0.089));
  // Its skeleton, numbered from 1 in cocoapi: [16, 14] first, [5, 7] last.
  CHECK(s.bones.front() == std::pair{15, 13});
  CHECK(s.bones.back() == std::pair{4, 6});
  CHECK_THROWS_WITH(s.joint("chin"), Contains("no joint called \"chin\""));
}

TEST_CASE("keypoints: the stick figures' skeleton", "[data][keypoints]") {
  const SkeletonSpec& s = stick_figure_skeleton();
  check_skeleton(s);
  REQUIRE(s.num_joints() >= 11);
  REQUIRE(s.num_joints() == 15);
  REQUIRE(s.bones.size() == 14);  // a tree: one bone fewer than joints
  REQUIRE(s.flip_pairs.size() == 6);
  for (float sigma : s.oks_sigmas) CHECK(sigma == 0.05f);
}

TEST_CASE("keypoints: flip_horizontal mirrors the image and the joints, and swaps the pairs",
          "[data][keypoints]") {
  // A skeleton of three joints: a middle one and a left/right pair.
  SkeletonSpec s;
  s.joint_names = {"middle", "left_hand", "right_hand"};
  s.flip_pairs = {{1, 2}};
  s.oks_sigmas = {0.1f, 0.1f, 0.1f};
  PoseSample p;
  p.image = Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 2, 3});  // (C, H, W)
  p.x = {1.5f, 0.5f, 2.25f};
  p.y = {1.0f, 0.5f, 1.5f};
  p.visible = {1, 0, 1};
  p.area = 4;
  p.torso = 2;
  const Tensor original = p.image;
  flip_horizontal(p, s);
  CHECK(p.image.to_vector() == std::vector<double>{3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10});
  CHECK(original.to_vector()[0] == 1);  // the old image is untouched
  // x → W − x (W = 3), then the hands trade places.
  CHECK(p.x == std::vector<float>{1.5f, 0.75f, 2.5f});
  CHECK(p.y == std::vector<float>{1.0f, 1.5f, 0.5f});
  CHECK(p.visible == std::vector<std::uint8_t>{1, 1, 0});
  CHECK(p.area == 4);
  CHECK(p.torso == 2);
  // A pixel centre stays a pixel centre: column j's centre j + 0.5 goes to (W − 1 − j) + 0.5.
  flip_horizontal(p, s);
  CHECK(p.image.to_vector() == original.to_vector());
  CHECK(p.x == std::vector<float>{1.5f, 0.5f, 2.25f});
  CHECK(p.visible == std::vector<std::uint8_t>{1, 0, 1});
}

TEST_CASE("keypoints: a sample that does not fit its skeleton is refused", "[data][keypoints]") {
  PoseSample p;
  p.image = Tensor::zeros({1, 4, 4});
  p.x = {1, 2};
  p.y = {1, 2};
  p.visible = {1, 1};
  CHECK_THROWS_WITH(flip_horizontal(p, coco_skeleton()),
                    Contains("2 x, 2 y and 2 visibility values for a skeleton of 17 joints"));
  SkeletonSpec two;
  two.joint_names = {"a", "b"};
  two.oks_sigmas = {0.1f, 0.1f};
  p.visible[1] = 2;
  CHECK_THROWS_WITH(check_pose_sample(p, two, "sample 3"),
                    Contains("sample 3: joint 1 (b) has visibility 2"));
  p.visible[1] = 1;
  p.image = Tensor::zeros({4, 4});
  CHECK_THROWS_WITH(check_pose_sample(p, two, "sample 3"), Contains("(C, H, W) float32"));
}
