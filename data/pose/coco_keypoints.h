#pragma once
// COCO keypoints (https://cocodataset.org/#format-data) for top-down pose estimation: each
// person annotation of a person_keypoints_*.json file is one sample, its box cut out of its photo
// and warped to the input size (data/pose/top_down_crop.h), its 17 keypoints carried along.
//
// The file: {"images": [{"id", "file_name", "height", "width", ...}],
//            "annotations": [{"id", "image_id", "category_id", "iscrowd", "bbox": [x, y, w, h],
//                             "area", "keypoints": [x1, y1, v1, ..., x17, y17, v17], ...}],
//            "categories": [{"id", "name": "person", "keypoints": [17 names], ...}]}
// (the polygons under "segmentation", most of the file, are skipped while parsing). Samples are
// the annotations of the person category that are not crowds and have at least one labelled
// keypoint (v > 0), in the file's order — mmpose's training set; "num_keypoints" is not read, as
// the keypoints themselves say it. Users point it at COCO 2017:
//   CocoKeypoints val("annotations/person_keypoints_val2017.json", "val2017");
//
// Conventions:
// - COCO's keypoints are pixel indices (0 .. W−1), its boxes continuous (0 .. W); as detectron2
//   does, a keypoint x becomes x + 0.5 before the crop, so both live in data/pose/keypoints.h's
//   coordinates. To map a prediction back for cocoapi: crop(i).inverse(), then subtract 0.5.
// - Visibility: COCO's v = 1 (labelled but occluded) and v = 2 (labelled and visible) both count
//   as labelled: visible = 1 (weight 1) — the model should learn where an occluded joint is, as
//   ViTPose does; v = 0 (not labelled) gives visible = 0. A labelled joint that the crop leaves
//   outside the input also gets visible = 0: no heatmap can point at it.
// - area: the annotation's "area" (its segment, as OKS uses) times the crop's area scale;
//   torso: the longer side of the annotated box times the crop's scale (mmpose's PCK "bbox").
//
// Errors name the JSON file and, where there is one, the annotation id: invalid JSON, a missing
// or mistyped field, a box with w or h <= 0 or not finite, keypoints that are not 51 numbers, lie
// a million pixels out or have a visibility outside {0, 1, 2}, an image id no image has, an image
// file that is missing (checked for every photo a sample uses when the reader is made, not an
// hour into training), a photo that does not decode or whose size is not the one the file gives
// (found when it is read).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "data/pose/keypoints.h"
#include "data/pose/top_down_crop.h"

namespace uwaga {

struct CocoCropConfig {
  std::int64_t height = 256, width = 192;  // the input size (ViTPose's)
  double padding = 1.25;                   // the window around the box, as mmpose
};

// Training-time changes to one crop (ViTPose's random box transform; all off by default).
struct CropJitter {
  double rotation_deg = 0;          // the person turned clockwise on screen
  double scale = 1;                 // the window grown by this factor (> 1 shows more context)
  double shift_x = 0, shift_y = 0;  // the window moved by these fractions of the box's w and h
};

struct CocoImage {
  std::int64_t id = 0;
  std::string file_name;  // relative to the image directory
  std::int64_t height = 0, width = 0;
};

// One person annotation, as the file gives it.
struct CocoPerson {
  std::int64_t annotation_id = 0;
  std::int64_t image_index = 0;               // into CocoKeypoints::image()
  std::array<double, 4> box{};                // x, y, w, h in photo pixels
  double area = 0;                            // photo pixels²
  std::array<float, 51> keypoints{};          // x, y, v for each of the 17 joints
};

class CocoKeypoints {
 public:
  CocoKeypoints(const std::string& annotation_json, const std::string& image_dir,
                CocoCropConfig config = {});

  std::int64_t size() const { return static_cast<std::int64_t>(persons_.size()); }
  const SkeletonSpec& skeleton() const { return coco_skeleton(); }
  const CocoCropConfig& config() const { return config_; }

  // Person i cropped: a (3, H, W) RGB input (greyscale photos repeated in three channels).
  PoseSample sample(std::int64_t i) const { return sample(i, CropJitter{}); }
  PoseSample sample(std::int64_t i, const CropJitter& jitter) const;

  std::int64_t annotation_id(std::int64_t i) const { return person(i).annotation_id; }
  const CocoPerson& person(std::int64_t i) const;
  const CocoImage& image(std::int64_t i) const;  // person i's photo
  std::string image_path(std::int64_t i) const;
  // The map from person i's photo (continuous coordinates) to the input.
  Affine2D crop(std::int64_t i, const CropJitter& jitter = {}) const;

 private:
  std::string json_path_;
  std::string image_dir_;
  CocoCropConfig config_;
  std::vector<CocoImage> images_;
  std::vector<CocoPerson> persons_;
};

}  // namespace uwaga
