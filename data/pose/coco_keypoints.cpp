#include "data/pose/coco_keypoints.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/json_input.h"
#include "data/images/idx.h"
#include "data/images/jpeg.h"

namespace uwaga {
namespace {

using nlohmann::json;

constexpr std::size_t kCocoJoints = 17;
// No photo reaches this far (JPEG allows 65,500 pixels a side).
constexpr double kFarOutside = 1e6;

// The fields read from an entry of "images" (its "id" is read first, to name it in messages).
struct ImageFields {
  std::string file_name;
  std::int64_t height = 0, width = 0;

  template <class Field>
  static void fields(Field&& field) {
    field("file_name", &ImageFields::file_name);
    field("height", &ImageFields::height);
    field("width", &ImageFields::width);
  }
};

// The fields read from an entry of "annotations".
struct AnnotationFields {
  std::int64_t image_id = 0, category_id = 0, iscrowd = 0;
  std::vector<double> bbox, keypoints;
  double area = 0;

  template <class Field>
  static void fields(Field&& field) {
    field("image_id", &AnnotationFields::image_id);
    field("category_id", &AnnotationFields::category_id);
    field("iscrowd", &AnnotationFields::iscrowd);
    field("bbox", &AnnotationFields::bbox);
    field("keypoints", &AnnotationFields::keypoints);
    field("area", &AnnotationFields::area);
  }
};

const json& list_of(const json& root, const char* key, const std::string& where) {
  const auto it = root.find(key);
  if (it == root.end())
    fail(where, ": there is no \"", key, "\" list (is this a COCO keypoints file?)");
  if (!it->is_array()) fail(where, ": \"", key, "\" should be a list, got ", json_brief(*it));
  return *it;
}

// The "id" of entry `index` of the list `list`.
std::int64_t entry_id(const json& entry, const std::string& where, const char* list,
                      std::size_t index) {
  if (!entry.is_object())
    fail(where, ": ", list, "[", index, "] should be a JSON object, got ", json_brief(entry));
  const auto it = entry.find("id");
  if (it == entry.end()) fail(where, ": ", list, "[", index, "] has no \"id\"");
  if (!it->is_number_integer())
    fail(where, ": ", list, "[", index, "] has the id ", json_brief(*it), ", expected an integer");
  return it->get<std::int64_t>();
}

// The id of the category called "person" (1 when the file lists no categories). Where the file
// names its keypoints, they must be COCO's 17 in COCO's order: every index below relies on it.
std::int64_t person_category(const json& root, const std::string& where) {
  const auto categories = root.find("categories");
  if (categories == root.end()) return 1;
  if (!categories->is_array())
    fail(where, ": \"categories\" should be a list, got ", json_brief(*categories));
  for (const json& category : *categories) {
    if (!category.is_object()) continue;
    const auto name = category.find("name");
    if (name == category.end() || *name != "person") continue;
    const auto id = category.find("id");
    if (id == category.end() || !id->is_number_integer())
      fail(where, ": the category \"person\" has no integer \"id\"");
    const auto keypoints = category.find("keypoints");
    if (keypoints != category.end() && *keypoints != json(coco_skeleton().joint_names))
      fail(where, ": the category \"person\" lists the keypoints ", json_brief(*keypoints),
           ", not COCO's 17 (\"nose\", \"left_eye\", ... \"right_ankle\")");
    return id->get<std::int64_t>();
  }
  fail(where, ": no category is called \"person\"");
}

// An image's file name must stay inside the image directory.
void check_file_name(const std::string& name, const std::string& where, std::int64_t id) {
  const std::filesystem::path path(name);
  const bool climbs =
      std::any_of(path.begin(), path.end(), [](const auto& part) { return part == ".."; });
  if (name.empty() || path.is_absolute() || climbs)
    fail(where, ": image ", id, ": the file name \"", name,
         "\" should be a relative path inside the image directory");
}

// A position or scale for a PoseSample. A tiny box's crop magnifies everything, so a joint may
// land far outside the input; it is clamped to ±1e9, which a float holds, instead of overflowing.
float to_float(double v) { return static_cast<float>(std::clamp(v, -1e9, 1e9)); }

// Person p cut out of its photo through t (photo → input).
PoseSample crop_person(const CocoPerson& p, const CocoImage& info, const std::string& path,
                       const Affine2D& t, const CocoCropConfig& config) {
  const ImageDataset photo = read_jpeg(path, 3);
  if (photo.height != info.height || photo.width != info.width)
    fail("its image '", path, "' is ", photo.width, " x ", photo.height,
         " pixels, but the annotation file says ", info.width, " x ", info.height);
  const std::int64_t H = config.height, W = config.width;
  PoseSample out;
  out.image = warp_affine(photo, t, H, W);
  out.x.assign(kCocoJoints, 0);
  out.y.assign(kCocoJoints, 0);
  out.visible.assign(kCocoJoints, 0);
  for (std::size_t j = 0; j < kCocoJoints; ++j) {
    if (p.keypoints[3 * j + 2] == 0) continue;
    // A pixel index becomes the pixel's centre (+0.5), then goes through the crop.
    const double px = p.keypoints[3 * j] + 0.5, py = p.keypoints[3 * j + 1] + 0.5;
    const double x = t.x(px, py), y = t.y(px, py);
    out.x[j] = to_float(x);
    out.y[j] = to_float(y);
    out.visible[j] = x >= 0 && x < static_cast<double>(W) && y >= 0 && y < static_cast<double>(H);
  }
  const double area_scale = std::abs(t.a * t.e - t.b * t.d);  // |det T|
  out.area = to_float(p.area * area_scale);
  out.torso = to_float(std::max(p.box[2], p.box[3]) * std::sqrt(area_scale));
  return out;
}

}  // namespace

CocoKeypoints::CocoKeypoints(const std::string& annotation_json, const std::string& image_dir,
                             CocoCropConfig config)
    : json_path_(annotation_json), image_dir_(image_dir), config_(config) {
  check_size_in_range("coco keypoints", "height", config_.height, 4096);
  check_size_in_range("coco keypoints", "width", config_.width, 4096);
  if (!(config_.padding > 0) || !std::isfinite(config_.padding))
    fail("coco keypoints: padding ", config_.padding, " should be positive");
  const std::string where = "'" + annotation_json + "'";
  json root;
  {
    std::string text;
    {
      const std::vector<std::uint8_t> bytes = read_file_bytes(annotation_json);
      text.assign(bytes.begin(), bytes.end());
    }  // one copy of the text at a time: COCO's training file is 238 MB
    root = parse_json_input(text, where, {"segmentation"});
  }
  if (!root.is_object())
    fail(where, " should be a JSON object with \"images\" and \"annotations\", got ",
         json_brief(root));
  const std::int64_t person_id = person_category(root, where);

  const json& images = list_of(root, "images", where);
  std::unordered_map<std::int64_t, std::int64_t> image_index;  // image id → index in images_
  images_.reserve(images.size());
  for (std::size_t k = 0; k < images.size(); ++k) {
    const std::int64_t id = entry_id(images[k], where, "images", k);
    ImageFields f;
    fields_from_json(images[k], f, where + ": image " + std::to_string(id));
    check_file_name(f.file_name, where, id);
    if (f.height < 1 || f.width < 1 || f.height > 65500 || f.width > 65500)
      fail(where, ": image ", id, ": its size ", f.width, " x ", f.height,
           " is not a JPEG's (1 .. 65500 pixels a side)");
    if (!image_index.emplace(id, static_cast<std::int64_t>(k)).second)
      fail(where, ": two images have the id ", id);
    images_.push_back({id, std::move(f.file_name), f.height, f.width});
  }

  const json& annotations = list_of(root, "annotations", where);
  std::unordered_set<std::int64_t> annotation_ids;
  std::vector<std::int64_t> first_use(images_.size(), -1);  // the first annotation of each photo
  const SkeletonSpec& skeleton = coco_skeleton();
  for (std::size_t k = 0; k < annotations.size(); ++k) {
    const std::int64_t id = entry_id(annotations[k], where, "annotations", k);
    const std::string what = where + ": annotation " + std::to_string(id);
    if (!annotation_ids.insert(id).second) fail(where, ": two annotations have the id ", id);
    AnnotationFields f;
    fields_from_json(annotations[k], f, what);
    if (f.keypoints.size() != 3 * kCocoJoints)
      fail(what, ": \"keypoints\" has ", f.keypoints.size(), " numbers, expected ", 3 * kCocoJoints,
           " (x, y and v for each of the 17 joints)");
    CocoPerson p;
    p.annotation_id = id;
    std::size_t labelled = 0;
    for (std::size_t j = 0; j < kCocoJoints; ++j) {
      const double x = f.keypoints[3 * j], y = f.keypoints[3 * j + 1], v = f.keypoints[3 * j + 2];
      if (!(std::abs(x) <= kFarOutside && std::abs(y) <= kFarOutside))
        fail(what, ": keypoint ", j, " (", skeleton.joint_names[j], ") is at (", x, ", ", y,
             "), far outside any photo");
      if (v != 0 && v != 1 && v != 2)
        fail(what, ": keypoint ", j, " (", skeleton.joint_names[j], ") has the visibility ", v,
             ", expected 0 (not labelled), 1 (labelled, occluded) or 2 (labelled, visible)");
      labelled += v > 0;
      p.keypoints[3 * j] = static_cast<float>(x);
      p.keypoints[3 * j + 1] = static_cast<float>(y);
      p.keypoints[3 * j + 2] = static_cast<float>(v);
    }
    if (f.category_id != person_id || f.iscrowd != 0 || labelled == 0) continue;
    const auto& b = f.bbox;
    const bool box_ok = b.size() == 4 && std::all_of(b.begin(), b.end(), [](double v) {
                          return std::isfinite(v);
                        }) && b[2] > 0 && b[3] > 0;
    if (!box_ok)
      fail(what, ": bad box ", json_brief(annotations[k]["bbox"]),
           ": expected [x, y, w, h], finite, with w > 0 and h > 0");
    if (!std::isfinite(f.area) || f.area < 0)
      fail(what, ": its area ", f.area, " should be a finite number >= 0");
    const auto image = image_index.find(f.image_id);
    if (image == image_index.end())
      fail(what, ": its image id ", f.image_id, " is not in \"images\"");
    p.image_index = image->second;
    std::copy(b.begin(), b.end(), p.box.begin());
    p.area = f.area;
    if (first_use[image->second] < 0) first_use[image->second] = id;
    persons_.push_back(p);
  }
  if (persons_.empty())
    fail(where, ": none of its ", annotations.size(),
         " annotations is a person with a labelled keypoint");

  // Every photo a sample needs is there, checked now rather than an hour into training. Why a
  // path is not a file: missing, something else, or not to be looked at (a permission).
  auto why_not = [](const std::filesystem::file_status& status, const std::error_code& ec,
                    const char* kind) {
    if (status.type() == std::filesystem::file_type::not_found) return std::string("does not exist");
    if (ec) return "cannot be read: " + ec.message();
    return std::string("is not a ") + kind;
  };
  std::error_code dir_ec;
  const auto dir_status = std::filesystem::status(image_dir_, dir_ec);
  if (dir_status.type() != std::filesystem::file_type::directory)
    fail(where, ": the directory of its photos '", image_dir_, "' ",
         why_not(dir_status, dir_ec, "directory"));
  for (std::size_t k = 0; k < images_.size(); ++k) {
    if (first_use[k] < 0) continue;
    const std::string path = (std::filesystem::path(image_dir_) / images_[k].file_name).string();
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (status.type() != std::filesystem::file_type::regular)
      fail(where, ": annotation ", first_use[k], ": its image '", path, "' (image id ",
           images_[k].id, ") ", why_not(status, ec, "regular file"));
  }
}

const CocoPerson& CocoKeypoints::person(std::int64_t i) const {
  if (i < 0 || i >= size())
    fail("coco keypoints: sample ", i, " is out of range ('", json_path_, "' has ", size(),
         " samples)");
  return persons_[static_cast<std::size_t>(i)];
}

const CocoImage& CocoKeypoints::image(std::int64_t i) const {
  return images_[static_cast<std::size_t>(person(i).image_index)];
}

std::string CocoKeypoints::image_path(std::int64_t i) const {
  return (std::filesystem::path(image_dir_) / image(i).file_name).string();
}

Affine2D CocoKeypoints::crop(std::int64_t i, const CropJitter& jitter) const {
  const CocoPerson& p = person(i);
  CropWindow window = crop_window(p.box[0], p.box[1], p.box[2], p.box[3], config_.height,
                                  config_.width, config_.padding);
  window.center_x += jitter.shift_x * p.box[2];
  window.center_y += jitter.shift_y * p.box[3];
  return crop_transform(window, config_.height, config_.width, jitter.rotation_deg, jitter.scale);
}

PoseSample CocoKeypoints::sample(std::int64_t i, const CropJitter& jitter) const {
  const CocoPerson& p = person(i);
  try {
    return crop_person(p, image(i), image_path(i), crop(i, jitter), config_);
  } catch (const Error& e) {
    fail("'", json_path_, "': annotation ", p.annotation_id, ": ", e.what());
  }
}

}  // namespace uwaga
