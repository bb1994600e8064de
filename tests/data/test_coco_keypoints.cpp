// The COCO keypoints reader on a tiny person_keypoints file and two photos written here (JPEGs
// encoded with libjpeg): which annotations become samples, where the crop puts a keypoint (where
// the affine map says, and on the photo's mark), visibility and scales, flip pairs, and every
// broken input an error naming the file and the annotation.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/pose/coco_keypoints.h"
#include "data/images/jpeg.h"
#include "data_test_files.h"

using namespace uwaga;
using namespace uwaga_test;
using Catch::Contains;
using nlohmann::json;

namespace {

constexpr int kNose = 0, kLeftShoulder = 5, kRightShoulder = 6, kLeftAnkle = 15;

// 17 unlabelled keypoints, then the ones given as {joint, x, y, v}.
json keypoints(std::initializer_list<std::array<double, 4>> labelled) {
  std::vector<double> k(51, 0.0);
  for (const auto& [j, x, y, v] : labelled) {
    const auto at = static_cast<std::size_t>(3 * j);
    k[at] = x, k[at + 1] = y, k[at + 2] = v;
  }
  return k;
}

// The fixture: photo 1 (80 x 60, colour) with a bright 3 x 3 mark centred on pixel (34, 14), the
// nose of annotation 101; photo 2 (50 x 40, grey); four annotations, of which 103 (a crowd) and
// 104 (no labelled keypoint) are skipped.
struct Fixture {
  TempDir dir{"coco"};
  json file;

  Fixture() {
    std::filesystem::create_directory(dir.file("images"));
    std::vector<std::uint8_t> rgb(3 * 60 * 80, 20);
    for (int c = 0; c < 3; ++c)
      for (int i = 13; i <= 15; ++i)
        for (int j = 33; j <= 35; ++j) rgb[static_cast<std::size_t>((c * 60 + i) * 80 + j)] = 250;
    write_jpeg(dir.file("images/000001.jpg"), rgb.data(), 3, 60, 80, 100);
    std::vector<std::uint8_t> grey(40 * 50, 90);
    write_jpeg(dir.file("images/000002.jpg"), grey.data(), 1, 40, 50, 90);
    file = {
        {"info", {{"description", "test"}}},
        {"images",
         {{{"id", 1}, {"file_name", "000001.jpg"}, {"height", 60}, {"width", 80}},
          {{"id", 2}, {"file_name", "000002.jpg"}, {"height", 40}, {"width", 50}},
          {{"id", 3}, {"file_name", "unused.jpg"}, {"height", 10}, {"width", 10}}}},
        {"annotations",
         {{{"id", 101}, {"image_id", 1}, {"category_id", 1}, {"iscrowd", 0},
           {"bbox", {20, 10, 30, 40}}, {"area", 800.0}, {"num_keypoints", 3},
           {"segmentation", {{20, 10, 50, 10, 50, 50}}},
           {"keypoints",
            keypoints({{kNose, 34, 14, 2}, {kLeftShoulder, 30, 25, 1}, {kLeftAnkle, 79, 59, 2}})}},
          {{"id", 102}, {"image_id", 2}, {"category_id", 1}, {"iscrowd", 0},
           {"bbox", {5, 5, 20, 30}}, {"area", 300.0}, {"num_keypoints", 1},
           {"segmentation", {{5, 5, 25, 5, 25, 35}}},
           {"keypoints", keypoints({{kRightShoulder, 20, 12, 2}})}},
          {{"id", 103}, {"image_id", 1}, {"category_id", 1}, {"iscrowd", 1},
           {"bbox", {0, 0, 80, 60}}, {"area", 4800.0}, {"num_keypoints", 0},
           {"segmentation", {{"counts", {0, 4800}}, {"size", {60, 80}}}},
           {"keypoints", keypoints({})}},
          {{"id", 104}, {"image_id", 2}, {"category_id", 1}, {"iscrowd", 0},
           {"bbox", {0, 0, 0, 0}}, {"area", 0.0}, {"num_keypoints", 0},
           {"keypoints", keypoints({})}}}},
        {"categories",
         {{{"id", 1}, {"name", "person"}, {"supercategory", "person"},
           {"keypoints", coco_skeleton().joint_names}}}}};
  }

  std::string json_path() const { return dir.file("person_keypoints_test.json"); }
  std::string write(const json& j) const {
    std::ofstream(json_path()) << j.dump();
    return json_path();
  }
  CocoKeypoints open(CocoCropConfig config = {64, 48, 1.25}) const {
    return CocoKeypoints(write(file), dir.file("images"), config);
  }
  // The reader's error after `change` to the file; it must name the file and `annotation`.
  std::string error(const std::function<void(json&)>& change, const std::string& annotation) {
    json broken = file;
    change(broken);
    std::ofstream(json_path()) << broken.dump();
    try {
      CocoKeypoints(json_path(), dir.file("images"), {64, 48, 1.25});
    } catch (const Error& e) {
      const std::string message = e.what();
      CHECK_THAT(message, Contains(json_path()) && Contains(annotation));
      return message;
    }
    FAIL("no error for a broken file");
    return "";
  }
};

json& annotation(json& file, std::size_t k) { return file["annotations"][k]; }

}  // namespace

TEST_CASE("coco keypoints: persons with labelled keypoints become samples, in order",
          "[data][coco]") {
  Fixture f;
  const CocoKeypoints coco = f.open();
  REQUIRE(coco.size() == 2);
  CHECK(coco.annotation_id(0) == 101);
  CHECK(coco.annotation_id(1) == 102);
  CHECK(coco.image(0).id == 1);
  CHECK(coco.image(1).file_name == "000002.jpg");
  CHECK(coco.image_path(1) == f.dir.file("images/000002.jpg"));
  CHECK(coco.person(0).box == std::array<double, 4>{20, 10, 30, 40});
  CHECK(coco.skeleton().num_joints() == 17);
  CHECK_THROWS_WITH(coco.sample(2),
                    Contains("sample 2 is out of range") && Contains("has 2 samples"));
}

TEST_CASE("coco keypoints: the crop puts a keypoint where the affine map says", "[data][coco]") {
  Fixture f;
  const CocoKeypoints coco = f.open();
  // Box (20, 10, 30, 40) has the input's aspect 48/64 already; times 1.25 it is a window of
  // 37.5 x 50 centred on (35, 30), scaled by 48 / 37.5 = 1.28 onto the input:
  //   x' = 1.28 (x − 35) + 24,   y' = 1.28 (y − 30) + 32.
  const Affine2D t = coco.crop(0);
  CHECK(t.x(35, 30) == Approx(24));
  CHECK(t.a == Approx(1.28));
  const PoseSample s = coco.sample(0);
  REQUIRE(s.image.shape() == Shape{3, 64, 48});
  // The nose is pixel (34, 14), centred at (34.5, 14.5).
  CHECK(s.x[kNose] == Approx(1.28 * (34.5 - 35) + 24));
  CHECK(s.y[kNose] == Approx(1.28 * (14.5 - 30) + 32));
  // COCO's v = 2 and v = 1 both count; v = 0 does not, nor a labelled joint outside the crop.
  CHECK(s.visible[kNose] == 1);
  CHECK(s.visible[kLeftShoulder] == 1);
  CHECK(s.visible[kRightShoulder] == 0);
  CHECK(s.x[kRightShoulder] == 0);
  CHECK(s.visible[kLeftAnkle] == 0);
  CHECK(s.x[kLeftAnkle] == Approx(1.28 * (79.5 - 35) + 24));
  CHECK(s.area == Approx(800 * 1.28 * 1.28));
  CHECK(s.torso == Approx(40 * 1.28));

  // The photo's mark lands on the nose: the centroid of the bright pixels in the crop.
  double sum = 0, sx = 0, sy = 0;
  for (std::int64_t i = 0; i < 64; ++i)
    for (std::int64_t j = 0; j < 48; ++j) {
      const double v = s.image.at({0, i, j});
      if (v < 0.3) continue;
      sum += v, sx += v * (j + 0.5), sy += v * (i + 0.5);
    }
  REQUIRE(sum > 0);
  CHECK(sx / sum == Approx(s.x[kNose]).margin(0.25));
  CHECK(sy / sum == Approx(s.y[kNose]).margin(0.25));

  // With jitter: turned, zoomed and shifted crops move the keypoint with the same map.
  const CropJitter jitter{30, 1.2, 0.1, -0.05};
  const Affine2D tj = coco.crop(0, jitter);
  const PoseSample sj = coco.sample(0, jitter);
  CHECK(sj.x[kNose] == Approx(tj.x(34.5, 14.5)));
  CHECK(sj.y[kNose] == Approx(tj.y(34.5, 14.5)));
  CHECK(sj.area == Approx(800 * 1.28 * 1.28 / (1.2 * 1.2)));
  // A grey photo comes as three equal channels.
  const PoseSample grey = coco.sample(1);
  REQUIRE(grey.image.shape() == Shape{3, 64, 48});
  CHECK(grey.image.at({0, 30, 20}) == grey.image.at({2, 30, 20}));
  CHECK(grey.image.at({1, 30, 20}) == Approx(90 / 255.0).margin(0.02));
}

TEST_CASE("coco keypoints: a mirrored crop swaps the flip pairs", "[data][coco]") {
  Fixture f;
  const CocoKeypoints coco = f.open();
  const PoseSample s = coco.sample(0);
  PoseSample m = coco.sample(0);
  flip_horizontal(m, coco.skeleton());
  CHECK(m.x[kNose] == Approx(48 - s.x[kNose]));
  CHECK(m.y[kNose] == s.y[kNose]);
  // The labelled left shoulder is now the right one, mirrored.
  CHECK(m.visible[kRightShoulder] == 1);
  CHECK(m.visible[kLeftShoulder] == 0);
  CHECK(m.x[kRightShoulder] == Approx(48 - s.x[kLeftShoulder]));
  CHECK(m.y[kRightShoulder] == s.y[kLeftShoulder]);
  CHECK(m.image.at({0, 10, 5}) == s.image.at({0, 10, 42}));
}

TEST_CASE("coco keypoints: broken files are errors naming the file and the annotation",
          "[data][coco]") {
  Fixture f;
  CHECK_THAT(f.error([](json& j) { annotation(j, 0)["bbox"] = {20, 10, 0, 40}; }, "annotation 101"),
             Contains("bad box [20, 10, 0, 40]"));
  CHECK_THAT(f.error([](json& j) { annotation(j, 1)["bbox"] = {5, 5, 20, -1}; }, "annotation 102"),
             Contains("bad box"));
  CHECK_THAT(f.error([](json& j) { annotation(j, 1)["bbox"] = {5, 5, 20}; }, "annotation 102"),
             Contains("expected [x, y, w, h]"));
  CHECK_THAT(f.error([](json& j) { annotation(j, 0)["bbox"] = {20, 10, nullptr, 40}; },
                     "annotation 101"),
             Contains("the field \"bbox[2]\" is null"));
  CHECK_THAT(f.error([](json& j) { annotation(j, 0)["keypoints"].erase(50); }, "annotation 101"),
             Contains("\"keypoints\" has 50 numbers, expected 51"));
  CHECK_THAT(f.error([](json& j) { annotation(j, 0)["keypoints"][2] = 3; }, "annotation 101"),
             Contains("keypoint 0 (nose) has the visibility 3"));
  CHECK_THAT(f.error([](json& j) { annotation(j, 1)["keypoints"][20] = 0.5; }, "annotation 102"),
             Contains("keypoint 6 (right_shoulder) has the visibility 0.5"));
  CHECK_THAT(f.error([](json& j) { annotation(j, 0)["keypoints"][3] = 1e7; }, "annotation 101"),
             Contains("keypoint 1 (left_eye) is at (1e+07, 0), far outside any photo"));
  CHECK_THAT(f.error([](json& j) { annotation(j, 0).erase("area"); }, "annotation 101"),
             Contains("the field \"area\" is missing"));
  CHECK_THAT(f.error([](json& j) { annotation(j, 0)["area"] = -1; }, "annotation 101"),
             Contains("area -1"));
  CHECK_THAT(f.error([](json& j) { annotation(j, 1)["image_id"] = 99; }, "annotation 102"),
             Contains("its image id 99 is not in \"images\""));
  CHECK_THAT(
      f.error([](json& j) { annotation(j, 1)["id"] = 101; }, "two annotations have the id 101"),
      Contains("two annotations"));
  CHECK_THAT(f.error([](json& j) { annotation(j, 1).erase("id"); }, "annotations[1] has no \"id\""),
             Contains("annotations[1]"));
  // The image of annotation 102 is missing.
  CHECK_THAT(
      f.error([](json& j) { j["images"][1]["file_name"] = "missing.jpg"; }, "annotation 102"),
      Contains("its image '" + f.dir.file("images/missing.jpg") + "' (image id 2) does not exist"));
  CHECK_THAT(f.error([](json& j) { j["images"][1]["file_name"] = "../000002.jpg"; }, "image 2"),
             Contains("should be a relative path inside the image directory"));
  CHECK_THAT(f.error([](json& j) { j["images"][0].erase("width"); }, "image 1"),
             Contains("the field \"width\" is missing"));
  CHECK_THAT(f.error([](json& j) { j.erase("annotations"); }, "no \"annotations\" list"),
             Contains("COCO keypoints file"));
  CHECK_THAT(f.error([](json& j) { j["categories"][0]["keypoints"][0] = "head"; }, "person"),
             Contains("not COCO's 17"));
  auto all_crowds = [](json& j) {
    for (auto& a : j["annotations"]) a["iscrowd"] = 1;
  };
  CHECK_THAT(f.error(all_crowds, "none of its 4"), Contains("is a person with a labelled keypoint"));

  // Not JSON at all: the parser's message, with the file.
  const std::string text = f.file.dump();
  for (const std::string& broken :
       {text.substr(0, text.size() / 2),
        std::string(R"({"images": [], "annotations": [{"bbox": [NaN]}]})")}) {
    std::ofstream(f.json_path()) << broken;
    CHECK_THROWS_WITH(CocoKeypoints(f.json_path(), f.dir.file("images")),
                      Contains(f.json_path()) && Contains("is not valid JSON"));
  }
  CHECK_THROWS_WITH(CocoKeypoints(f.dir.file("nothing.json"), f.dir.file("images")),
                    Contains(f.dir.file("nothing.json")) && Contains("file not found"));
  CHECK_THROWS_WITH(CocoKeypoints(f.write(f.file), f.dir.file("images"), {64, 48, 0}),
                    Contains("padding 0"));
}

TEST_CASE("coco keypoints: a photo that is damaged or of the wrong size is named with its "
          "annotation when it is read", "[data][coco]") {
  Fixture f;
  json wrong = f.file;
  wrong["images"][0]["width"] = 81;
  const CocoKeypoints coco(f.write(wrong), f.dir.file("images"), {64, 48, 1.25});
  CHECK_THROWS_WITH(coco.sample(0), Contains(f.json_path()) && Contains("annotation 101") &&
                                        Contains("is 80 x 60 pixels, but the annotation file "
                                                 "says 81 x 60"));
  CHECK_THROWS_WITH(coco.sample(1, CropJitter{0, 0, 0, 0}),
                    Contains("annotation 102") && Contains("scale 0"));
  const std::string photo = f.dir.file("images/000002.jpg");
  const Bytes bytes = read_bytes(photo);
  write_bytes(photo,
              Bytes(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() / 2)));
  CHECK_THROWS_WITH(coco.sample(1), Contains(f.json_path()) && Contains("annotation 102") &&
                                        Contains(photo) && Contains("Premature end of JPEG file"));
}
