// COCO person_keypoints files: the lists, ids, boxes, keypoints and categories, then the crop of
// every sample from a small photo (all images of the input name the one file, photo.jpg).
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "data/pose/coco_keypoints.h"
#include "data/images/jpeg.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// A directory holding photo.jpg, 40 x 30 pixels, made once per process and removed at its exit.
struct ImageDir {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("uwaga-fuzz-images-" + std::to_string(::getpid()))).string();
  ImageDir() {
    std::filesystem::create_directories(path);
    std::vector<std::uint8_t> pixels(3 * 30 * 40);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 7);
    uwaga::write_jpeg(path + "/photo.jpg", pixels.data(), 3, 30, 40, 90);
  }
  ~ImageDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

const std::string& image_dir() {
  static const ImageDir dir;
  return dir.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = uwaga::fuzz::write_input(data, size, ".json");
  uwaga::fuzz::expect_error_or_success([&] {
    const uwaga::CocoKeypoints coco(path, image_dir(), {16, 12, 1.25});
    for (std::int64_t i = 0; i < coco.size() && i < 8; ++i) {
      uwaga::fuzz::expect_error_or_success([&] { coco.sample(i); });
      uwaga::fuzz::expect_error_or_success([&] { coco.sample(i, {45, 1.3, 0.2, -0.1}); });
    }
  });
  return 0;
}
