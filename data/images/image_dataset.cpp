#include "data/images/image_dataset.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.h"

namespace uwaga {

void check_image_dataset(const ImageDataset& data, const std::string& what) {
  if (data.count < 0 || data.channels <= 0 || data.height <= 0 || data.width <= 0)
    fail(what, ": bad image dataset shape: count ", data.count, ", channels ", data.channels,
         ", height ", data.height, ", width ", data.width);
  const auto expected_pixels = static_cast<std::size_t>(data.count * data.image_size());
  if (data.pixels.size() != expected_pixels)
    fail(what, ": holds ", data.pixels.size(), " pixel bytes, expected ", expected_pixels, " (",
         data.count, " images of ", data.channels, " x ", data.height, " x ", data.width, ")");
  if (data.labels.size() != static_cast<std::size_t>(data.count))
    fail(what, ": holds ", data.labels.size(), " labels for ", data.count, " images");
  for (std::size_t i = 0; i < data.labels.size(); ++i)
    if (data.labels[i] < 0 || data.labels[i] >= data.num_classes())
      fail(what, ": label ", data.labels[i], " at index ", i, "; expected 0..",
           data.num_classes() - 1);
}

ImageDataset take_first(const ImageDataset& data, std::int64_t n) {
  if (n < 0) fail("take_first: cannot take ", n, " images");
  ImageDataset out = data;
  out.count = std::min(n, data.count);
  out.pixels.resize(static_cast<std::size_t>(out.count * data.image_size()));
  out.labels.resize(static_cast<std::size_t>(out.count));
  return out;
}

void append_images(ImageDataset& data, const ImageDataset& more) {
  if (data.count == 0 && data.pixels.empty()) {
    data = more;
    return;
  }
  if (more.channels != data.channels || more.height != data.height || more.width != data.width)
    fail("append_images: cannot append images of shape (", more.channels, ", ", more.height, ", ",
         more.width, ") to images of shape (", data.channels, ", ", data.height, ", ", data.width,
         ")");
  data.pixels.insert(data.pixels.end(), more.pixels.begin(), more.pixels.end());
  data.labels.insert(data.labels.end(), more.labels.begin(), more.labels.end());
  data.count += more.count;
}

ChannelStats channel_stats(const ImageDataset& data) {
  if (data.count == 0) fail("channel_stats: the dataset is empty");
  // A histogram of the 256 byte values per channel gives the exact sums with integer arithmetic,
  // so the statistics do not depend on summation order.
  const std::int64_t C = data.channels, HW = data.height * data.width;
  std::vector<std::array<std::uint64_t, 256>> histogram(static_cast<std::size_t>(C));
  for (auto& h : histogram) h.fill(0);
  for (std::int64_t i = 0; i < data.count; ++i) {
    const std::uint8_t* img = data.image(i);  // (C, H, W)
    for (std::int64_t c = 0; c < C; ++c) {
      auto& h = histogram[static_cast<std::size_t>(c)];
      const std::uint8_t* plane = img + c * HW;
      for (std::int64_t p = 0; p < HW; ++p) ++h[plane[p]];
    }
  }
  ChannelStats stats;
  const double n = static_cast<double>(data.count * HW);
  for (const auto& h : histogram) {
    double sum = 0, sum_sq = 0;
    for (int v = 0; v < 256; ++v) {
      const double x = v / 255.0;
      sum += x * static_cast<double>(h[v]);
      sum_sq += x * x * static_cast<double>(h[v]);
    }
    const double mean = sum / n;
    const double var = std::max(0.0, sum_sq / n - mean * mean);
    stats.mean.push_back(static_cast<float>(mean));
    stats.std.push_back(static_cast<float>(std::sqrt(var)));
  }
  return stats;
}

}  // namespace uwaga
