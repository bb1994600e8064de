#include "data/data_loader.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/threads.h"

namespace uwaga {
namespace {

// The shuffle's stream: a counter no image index can take, so it never coincides with an
// image's augmentation stream.
constexpr std::uint64_t kShuffleStream = ~std::uint64_t{0};
// Mixup's stream: the base seed is changed, so (epoch, batch) never meets an image's stream.
constexpr std::uint64_t kMixStream = 0x6D69787570ull;  // "mixup"

constexpr std::int64_t kParallelPixels = std::int64_t{1} << 20;

}  // namespace

DataLoader::DataLoader(const ImageDataset& data, DataLoaderOptions options)
    : data_(&data), options_(std::move(options)) {
  check_image_dataset(data, "DataLoader");
  const std::int64_t C = data.channels;
  if (options_.batch_size <= 0) fail("DataLoader: batch_size must be positive, got ",
                                     options_.batch_size);
  if (data.count == 0) fail("DataLoader: the dataset is empty");
  if (options_.mean.empty()) options_.mean.assign(static_cast<std::size_t>(C), 0.0f);
  if (options_.std.empty()) options_.std.assign(static_cast<std::size_t>(C), 1.0f);
  if (static_cast<std::int64_t>(options_.mean.size()) != C ||
      static_cast<std::int64_t>(options_.std.size()) != C)
    fail("DataLoader: the images have ", C, " channels but mean has ", options_.mean.size(),
         " values and std ", options_.std.size());
  for (float s : options_.std)
    if (!(s > 0)) fail("DataLoader: std values must be positive, got ", s);
  if (options_.augment.max_shift < 0)
    fail("DataLoader: augment.max_shift must be >= 0, got ", options_.augment.max_shift);
  options_.augment.validate();
  options_.mix.validate();
  if (batches_per_epoch() == 0)
    fail("DataLoader: ", data.count, " images make no full batch of ", options_.batch_size,
         " with drop_last");

  lut_.resize(static_cast<std::size_t>(C * 256));
  for (std::int64_t c = 0; c < C; ++c)
    for (int v = 0; v < 256; ++v)
      lut_[static_cast<std::size_t>(c * 256 + v)] =
          static_cast<float>((v / 255.0 - options_.mean[c]) / options_.std[c]);
}

std::int64_t DataLoader::batches_per_epoch() const {
  const std::int64_t n = data_->count, B = options_.batch_size;
  // Not (n + B - 1) / B: that overflows for a batch size near the int64 limit (eval
  // --batch-size 9223372036854775807 means "all images in one batch", not "no batch").
  return n / B + (!options_.drop_last && n % B != 0 ? 1 : 0);
}

std::vector<std::int64_t> DataLoader::epoch_order(std::int64_t epoch) const {
  std::vector<std::int64_t> order(static_cast<std::size_t>(data_->count));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  if (!options_.shuffle) return order;
  // Fisher–Yates: position i takes a uniformly chosen element of the not-yet-placed 0..i.
  Generator gen(derive_seed(options_.seed, static_cast<std::uint64_t>(epoch), kShuffleStream));
  for (std::size_t i = order.size() - 1; i > 0; --i)
    std::swap(order[i], order[gen.below(i + 1)]);
  return order;
}

std::vector<std::int64_t> DataLoader::batch_indices(const std::vector<std::int64_t>& order,
                                                    std::int64_t b) const {
  if (b < 0 || b >= batches_per_epoch())
    fail("DataLoader: batch ", b, " out of range; an epoch has ", batches_per_epoch(), " batches");
  const std::int64_t begin = b * options_.batch_size;
  const std::int64_t end = std::min(begin + options_.batch_size, data_->count);
  return {order.begin() + begin, order.begin() + end};
}

const std::vector<std::int64_t>& DataLoader::order_of(std::int64_t epoch) {
  if (order_epoch_ != epoch) {
    order_ = epoch_order(epoch);
    order_epoch_ = epoch;
  }
  return order_;
}

ImageBatch DataLoader::batch(std::int64_t epoch, std::int64_t b) {
  return make_batch(batch_indices(order_of(epoch), b), epoch);
}

ImageBatch DataLoader::make_batch(const std::vector<std::int64_t>& indices, std::int64_t epoch) const {
  const ImageDataset& d = *data_;
  const std::int64_t B = static_cast<std::int64_t>(indices.size());
  const std::int64_t C = d.channels, H = d.height, W = d.width, CHW = d.image_size();
  for (std::int64_t i : indices)
    if (i < 0 || i >= d.count)
      fail("DataLoader: image index ", i, " out of range for ", d.count, " images");
  ImageBatch batch;
  batch.images = Tensor::empty({B, C, H, W}, DType::Float32);
  batch.labels = Tensor::empty({B}, DType::Int64);
  batch.indices = indices;
  float* images = batch.images.data<float>();             // (B, C, H, W)
  std::int64_t* labels = batch.labels.data<std::int64_t>();  // (B,)
  const bool augment = options_.augment.enabled();
  const bool pixel_ops = options_.augment.uses_pixel_ops();
  // Each image has its own generator, so the result does not depend on the thread count.
  // Building a batch costs about 2 ns a pixel; below ~1 ms of work forking threads does not pay.
  // The byte-image pipeline (RandAugment and the rest) costs some 50 ns a pixel: always split.
  parallel_for(B, B * CHW > kParallelPixels || (pixel_ops && B > 1), [&](std::int64_t k0, std::int64_t k1) {
    for (std::int64_t k = k0; k < k1; ++k) {
      const std::int64_t i = indices[static_cast<std::size_t>(k)];
      ImageTransform t;
      if (augment) {
        Generator gen(derive_seed(options_.seed, static_cast<std::uint64_t>(epoch),
                                  static_cast<std::uint64_t>(i)));
        if (pixel_ops) {
          augment_image(d.image(i), C, H, W, options_.augment, gen, lut_.data(),
                        images + k * CHW);
          labels[k] = d.labels[static_cast<std::size_t>(i)];
          continue;
        }
        t = draw_transform(options_.augment, gen);
      }
      transform_image(d.image(i), C, H, W, t, lut_.data(), images + k * CHW);
      labels[k] = d.labels[static_cast<std::size_t>(i)];
    }
  });
  return batch;
}

bool DataLoader::next(ImageBatch& batch) {
  if (position_.batch >= batches_per_epoch()) {
    position_ = {position_.epoch + 1, 0};
    return false;
  }
  batch = make_batch(batch_indices(order_of(position_.epoch), position_.batch), position_.epoch);
  ++position_.batch;
  return true;
}

void DataLoader::set_position(const LoaderPosition& position) {
  if (position.epoch < 0 || position.batch < 0 || position.batch > batches_per_epoch())
    fail("DataLoader: cannot resume at epoch ", position.epoch, ", batch ", position.batch,
         "; an epoch has ", batches_per_epoch(), " batches");
  position_ = position;
}

Batch DataLoader::batch(std::int64_t index) {
  ImageBatch b = batch(epoch_, index);
  if (!options_.mix.enabled()) return {{b.images}, b.labels};
  // Mixup / CutMix: one draw per batch, from (seed, epoch, batch) on a stream of its own.
  Generator gen(derive_seed(options_.seed ^ kMixStream, static_cast<std::uint64_t>(epoch_),
                            static_cast<std::uint64_t>(index)));
  const MixDraw draw = draw_mix(options_.mix, data_->height, data_->width, gen);
  Tensor targets = mix_batch(b.images, b.labels, data_->num_classes(), draw);
  return {{b.images}, targets};
}

}  // namespace uwaga
