// Top-down crops: the window around a box has the input's aspect and the padding, the affine map
// sends the window onto the input (turned and zoomed as asked), and bilinear sampling reproduces
// exact cases — the identity, whole-pixel shifts, half-pixel shifts, quarter turns.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "data/pose/top_down_crop.h"

using namespace uwaga;
using Catch::Contains;

namespace {

// A one-image dataset of (C, H, W) bytes.
ImageDataset photo_of(std::vector<std::uint8_t> pixels, std::int64_t C, std::int64_t H,
                      std::int64_t W) {
  ImageDataset photo;
  photo.count = 1;
  photo.channels = C;
  photo.height = H;
  photo.width = W;
  photo.pixels = std::move(pixels);
  photo.labels = {0};
  return photo;
}

// A photo whose every pixel differs: value (c, i, j) = 10 c + 7 i + j.
ImageDataset numbered_photo(std::int64_t C, std::int64_t H, std::int64_t W) {
  std::vector<std::uint8_t> pixels;
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t i = 0; i < H; ++i)
      for (std::int64_t j = 0; j < W; ++j)
        pixels.push_back(static_cast<std::uint8_t>(10 * c + 7 * i + j));
  return photo_of(pixels, C, H, W);
}

double photo_value(const ImageDataset& p, std::int64_t c, std::int64_t i, std::int64_t j) {
  if (i < 0 || i >= p.height || j < 0 || j >= p.width) return 0;
  return p.pixels[static_cast<std::size_t>((c * p.height + i) * p.width + j)] / 255.0;
}

}  // namespace

TEST_CASE("top-down crop: the window has the input's aspect, times the padding",
          "[data][top_down_crop]") {
  // Input 64 x 48 (aspect 0.75). A box of 30 x 40 has that aspect already.
  CropWindow w = crop_window(20, 10, 30, 40, 64, 48, 1.25);
  CHECK(w.center_x == 35);
  CHECK(w.center_y == 30);
  CHECK(w.width == Approx(37.5));
  CHECK(w.height == Approx(50));
  // A wide box grows in height, a tall one in width; the centre stays.
  w = crop_window(0, 0, 90, 10, 64, 48, 1.0);
  CHECK(w.width == Approx(90));
  CHECK(w.height == Approx(120));
  CHECK(w.center_y == 5);
  w = crop_window(0, 0, 10, 80, 64, 48, 2.0);
  CHECK(w.width == Approx(120));
  CHECK(w.height == Approx(160));

  CHECK_THROWS_WITH(crop_window(0, 0, 0, 10, 64, 48, 1.25),
                    Contains("the box (0, 0, 0, 10) should be finite with a positive width"));
  CHECK_THROWS_WITH(crop_window(0, 0, 5, std::nan(""), 64, 48, 1.25), Contains("(0, 0, 5, nan)"));
  CHECK_THROWS_WITH(crop_window(0, 0, 5, 5, 64, 48, 0), Contains("padding 0"));
}

TEST_CASE("top-down crop: the map sends the window onto the input", "[data][top_down_crop]") {
  const CropWindow w{35, 30, 37.5, 50};
  const Affine2D t = crop_transform(w, 64, 48);
  auto maps = [](const Affine2D& m, double x, double y, double ex, double ey) {
    CHECK(m.x(x, y) == Approx(ex).margin(1e-9));
    CHECK(m.y(x, y) == Approx(ey).margin(1e-9));
  };
  maps(t, 35, 30, 24, 32);                  // centre to centre
  maps(t, 35 - 18.75, 30 - 25, 0, 0);       // corners to corners
  maps(t, 35 + 18.75, 30 + 25, 48, 64);
  // Turned 90° clockwise on screen: a point right of the centre goes below it.
  const Affine2D turned = crop_transform(w, 64, 48, 90);
  maps(turned, 35 + 10, 30, 24, 32 + 10 * 48 / 37.5);
  maps(turned, 35, 30 - 10, 24 + 10 * 64 / 50.0, 32);
  // Zoomed out twice: the window's corners land halfway to the centre.
  maps(crop_transform(w, 64, 48, 0, 2), 35 - 18.75, 30 - 25, 12, 16);
  // The inverse undoes it.
  const Affine2D back = turned.inverse();
  for (const auto& [x, y] : {std::pair{3.0, 4.0}, {-20.0, 100.5}, {35.0, 30.0}})
    maps(back, turned.x(x, y), turned.y(x, y), x, y);
  Affine2D flat;
  flat.e = 0;
  CHECK_THROWS_WITH(flat.inverse(), Contains("singular"));
}

TEST_CASE("top-down crop: bilinear sampling reproduces the exact cases", "[data][top_down_crop]") {
  const ImageDataset photo = numbered_photo(2, 5, 5);
  SECTION("the identity copies the photo") {
    const Tensor out = warp_affine(photo, Affine2D{}, 5, 5);
    REQUIRE(out.shape() == Shape{2, 5, 5});
    for (std::int64_t c = 0; c < 2; ++c)
      for (std::int64_t i = 0; i < 5; ++i)
        for (std::int64_t j = 0; j < 5; ++j)
          CHECK(out.at({c, i, j}) == Approx(photo_value(photo, c, i, j)).margin(1e-7));
  }
  SECTION("a shift by whole pixels moves the photo, zeros come in") {
    Affine2D shift;
    shift.c = -2, shift.f = -1;  // input = photo − (2, 1): input (i, j) shows photo (i + 1, j + 2)
    const Tensor out = warp_affine(photo, shift, 4, 6);
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < 6; ++j)
        CHECK(out.at({1, i, j}) == Approx(photo_value(photo, 1, i + 1, j + 2)).margin(1e-7));
  }
  SECTION("a shift by half a pixel averages neighbours") {
    Affine2D half;
    half.c = 0.5;
    const Tensor out = warp_affine(photo, half, 5, 5);
    for (std::int64_t j = 0; j < 5; ++j) {
      const double expected = (photo_value(photo, 0, 2, j - 1) + photo_value(photo, 0, 2, j)) / 2;
      CHECK(out.at({0, 2, j}) == Approx(expected).margin(1e-7));
    }
  }
  SECTION("a quarter turn about the centre permutes the pixels") {
    // Clockwise on screen: input (i, j) shows photo row N − 1 − j, column i.
    const Affine2D turn = crop_transform(CropWindow{2.5, 2.5, 5, 5}, 5, 5, 90);
    const Tensor out = warp_affine(photo, turn, 5, 5);
    for (std::int64_t i = 0; i < 5; ++i)
      for (std::int64_t j = 0; j < 5; ++j)
        CHECK(out.at({0, i, j}) == Approx(photo_value(photo, 0, 4 - j, i)).margin(1e-6));
  }
  SECTION("far outside the photo is zero") {
    Affine2D far;
    far.c = 1e12;
    const Tensor out = warp_affine(photo, far, 3, 3);
    for (double v : out.to_vector()) CHECK(v == 0);
  }
  CHECK_THROWS_WITH(warp_affine(ImageDataset{}, Affine2D{}, 3, 3), Contains("holds no image"));
}
