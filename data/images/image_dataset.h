#pragma once
// ImageDataset: a labelled set of small images held as bytes, exactly as they come from disk.
// The pixels stay uint8 — a quarter of the memory of float32 — until the DataLoader turns a
// batch of them into a float tensor.
#include <cstdint>
#include <string>
#include <vector>

namespace uwaga {

struct ImageDataset {
  std::int64_t count = 0;
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::vector<std::uint8_t> pixels;      // (count, C, H, W), row by row within each channel
  std::vector<std::int64_t> labels;      // (count,), each in 0 .. class_names.size() - 1
  std::vector<std::string> class_names;  // class_names[label] is what the label means

  std::int64_t image_size() const { return channels * height * width; }  // bytes per image
  std::int64_t num_classes() const { return static_cast<std::int64_t>(class_names.size()); }
  const std::uint8_t* image(std::int64_t i) const { return pixels.data() + i * image_size(); }
};

// Throws unless the sizes of pixels and labels agree with count, C, H and W and every label is a
// valid class. `what` names the dataset in the message.
void check_image_dataset(const ImageDataset& data, const std::string& what);

// The first n images (all of them when n >= count): --train-size for quick experiments.
ImageDataset take_first(const ImageDataset& data, std::int64_t n);

// Appends `more` to `data`; both must have the same image shape (C, H, W).
void append_images(ImageDataset& data, const ImageDataset& more);

// Mean and standard deviation of each channel over the whole dataset, in units of pixel / 255
// (the numbers torchvision's Normalize expects, e.g. 0.1307 and 0.3081 for MNIST).
struct ChannelStats {
  std::vector<float> mean;  // (C,)
  std::vector<float> std;   // (C,)
};
ChannelStats channel_stats(const ImageDataset& data);

}  // namespace uwaga
