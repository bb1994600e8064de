#include "data/images/idx.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/regular_file.h"

namespace uwaga {
namespace {

constexpr std::uint32_t kImagesMagic = 2051;  // 0x00000803: unsigned bytes, 3 dimensions
constexpr std::uint32_t kLabelsMagic = 2049;  // 0x00000801: unsigned bytes, 1 dimension

// The file's bytes as they are on disk, at most kMaxInflatedBytes of them. Like every input file
// it must be a regular file (core/regular_file.h): a directory, a FIFO (whose opening would
// block), a device or an unreadable file is refused, naming the file and what it is.
std::vector<std::uint8_t> read_raw(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(path, ": file not found");
  const std::string bytes = read_regular_file(path, kMaxInflatedBytes, path);
  return {bytes.begin(), bytes.end()};
}

bool is_gzip(const std::vector<std::uint8_t>& bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

// Inflates a gzip file held in memory, keeping at most `limit` bytes: when the stream holds more,
// inflating stops there and `*more` is set (the caller decides whether that is an error). zlib
// checks each member's CRC-32 and length, so a corrupt stream fails here instead of yielding
// plausible-looking but wrong pixels. The limit is what keeps a small crafted file (deflate
// reaches about 1032:1, and gzip members can follow one another without end) from inflating to
// gigabytes before anything looks at it.
std::vector<std::uint8_t> gunzip(const std::vector<std::uint8_t>& in, const std::string& path,
                                 std::size_t limit, bool* more) {
  constexpr std::size_t kChunk = 1 << 20;
  *more = false;
  std::vector<std::uint8_t> out;
  // The last 4 bytes hold the uncompressed size mod 2^32: a good first guess for the buffer.
  if (in.size() >= 18) {
    const std::size_t n = in.size();
    const std::uint32_t hint = in[n - 4] | (in[n - 3] << 8) | (in[n - 2] << 16) |
                               (static_cast<std::uint32_t>(in[n - 1]) << 24);
    out.reserve(std::min<std::size_t>({std::size_t{hint}, 1032 * in.size(), limit}));
  }
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) fail(path, ": cannot initialise zlib");  // 16: gzip
  zs.next_in = const_cast<Bytef*>(in.data());
  std::size_t consumed = 0;  // input bytes handed to zlib so far
  int rc = Z_OK;
  while (true) {
    if (zs.avail_in == 0 && consumed < in.size()) {
      const std::size_t n = std::min<std::size_t>(in.size() - consumed, 1u << 30);
      zs.next_in = const_cast<Bytef*>(in.data() + consumed);
      zs.avail_in = static_cast<uInt>(n);
      consumed += n;
    }
    if (out.size() == limit) {
      // Full: one byte more tells whether the stream goes on.
      std::uint8_t probe;
      zs.next_out = &probe;
      zs.avail_out = 1;
      rc = inflate(&zs, Z_NO_FLUSH);
      if (zs.avail_out == 0) {
        *more = true;
        inflateEnd(&zs);
        return out;
      }
    } else {
      const std::size_t before = out.size();
      const std::size_t room = std::min(kChunk, limit - before);
      out.resize(before + room);
      zs.next_out = out.data() + before;
      zs.avail_out = static_cast<uInt>(room);
      rc = inflate(&zs, Z_NO_FLUSH);
      out.resize(before + room - zs.avail_out);
    }
    if (rc == Z_STREAM_END) {
      const std::size_t left = zs.avail_in + (in.size() - consumed);
      if (left == 0) break;
      // gzip allows several members one after another; anything else after the end is damage.
      const std::uint8_t* next = zs.next_in;
      if (left >= 2 && next[0] == 0x1f && next[1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      inflateEnd(&zs);
      fail(path, ": corrupt gzip file: ", left, " unexpected bytes after the end of the stream");
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && consumed == in.size()) {
      inflateEnd(&zs);
      fail(path, ": corrupt gzip file: the stream ends early (truncated after ", out.size(),
           " uncompressed bytes)");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const std::string why = zs.msg ? zs.msg : zError(rc);
      inflateEnd(&zs);
      fail(path, ": corrupt gzip stream (zlib: ", why, ")");
    }
  }
  inflateEnd(&zs);
  return out;
}

// `raw`, the file's bytes, inflated when gzip, refusing more than `limit` bytes after inflating.
std::vector<std::uint8_t> inflate_bounded(std::vector<std::uint8_t> raw, const std::string& path,
                                          std::size_t limit, const std::string& why_limit) {
  if (!is_gzip(raw)) return raw;
  bool more = false;
  std::vector<std::uint8_t> out = gunzip(raw, path, limit, &more);
  if (more)
    fail(path, ": the gzip file inflates to more than ", limit, " bytes (", why_limit,
         "); refused without inflating the rest");
  return out;
}

// The first `n` bytes of the file (fewer when it is shorter), inflated when gzip: an IDX header.
std::vector<std::uint8_t> read_prefix(const std::string& path,
                                      const std::vector<std::uint8_t>& raw, std::size_t n) {
  if (!is_gzip(raw)) return {raw.begin(), raw.begin() + static_cast<long>(std::min(n, raw.size()))};
  bool more = false;
  try {
    return gunzip(raw, path, n, &more);
  } catch (const Error&) {
    return {};  // a damaged stream: the full read below says what is wrong
  }
}

std::uint32_t read_be32(const std::uint8_t* p) {
  return (static_cast<std::uint32_t>(p[0]) << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
}

// Checks the magic number and returns the dimensions of an IDX file of unsigned bytes.
std::vector<std::int64_t> read_idx_header(const std::vector<std::uint8_t>& bytes,
                                          const std::string& path, std::uint32_t magic,
                                          const char* kind) {
  const std::size_t ndims = magic & 0xff;
  const std::size_t header = 4 + 4 * ndims;
  if (bytes.size() < 4)
    fail(path, ": truncated file: expected at least ", header, " bytes of IDX header, got ",
         bytes.size());
  const std::uint32_t found = read_be32(bytes.data());
  if (found != magic)
    fail(path, ": wrong magic number ", found, "; expected ", magic, " (an IDX file of ", kind,
         ")", found == kImagesMagic || found == kLabelsMagic ? "; images and labels swapped?" : "");
  if (bytes.size() < header)
    fail(path, ": truncated file: expected at least ", header, " bytes of IDX header, got ",
         bytes.size());
  std::vector<std::int64_t> dims;
  for (std::size_t d = 0; d < ndims; ++d) dims.push_back(read_be32(bytes.data() + 4 + 4 * d));
  return dims;
}

void check_size(const std::vector<std::uint8_t>& bytes, const std::string& path,
                std::size_t expected, const std::string& layout) {
  if (bytes.size() < expected)
    fail(path, ": truncated file: expected ", expected, " bytes (", layout, "), got ",
         bytes.size());
  if (bytes.size() > expected)
    fail(path, ": file too long: expected ", expected, " bytes (", layout, "), got ", bytes.size());
}

// An IDX file's bytes. A gzip file is inflated only as far as its header says the file reaches
// and no further: its first `header` bytes are inflated first, and the dimensions there bound the
// rest.
std::vector<std::uint8_t> read_idx_bytes(const std::string& path, std::uint32_t magic,
                                         std::size_t header) {
  std::vector<std::uint8_t> raw = read_raw(path);
  if (!is_gzip(raw)) return raw;
  const std::vector<std::uint8_t> head = read_prefix(path, raw, header);
  std::uint64_t limit = header;  // a damaged header: the full read's errors say what is wrong
  if (head.size() == header && read_be32(head.data()) == magic) {
    bool overflow = false;
    for (std::size_t d = 0; d < (magic & 0xff); ++d) {
      std::uint64_t product = 0;
      overflow = overflow || __builtin_mul_overflow(d == 0 ? std::uint64_t{1} : limit - header,
                                                    read_be32(head.data() + 4 + 4 * d), &product);
      limit = header + product;
    }
    if (overflow || limit > kMaxInflatedBytes)
      fail(path, ": the IDX header promises more than ", kMaxInflatedBytes,
           " bytes, the most this reader inflates a gzip file to — a damaged header?");
  }
  return inflate_bounded(std::move(raw), path, static_cast<std::size_t>(limit),
                         "what its IDX header implies: file too long");
}

}  // namespace

std::vector<std::uint8_t> read_file_bytes(const std::string& path, std::size_t max_inflated) {
  return inflate_bounded(read_raw(path), path, max_inflated,
                         "the most this reader inflates a data file to");
}

IdxImages read_idx_images(const std::string& path) {
  const std::vector<std::uint8_t> bytes = read_idx_bytes(path, kImagesMagic, 16);
  const auto dims = read_idx_header(bytes, path, kImagesMagic, "images");
  IdxImages images;
  images.count = dims[0];
  images.height = dims[1];
  images.width = dims[2];
  // An image of no pixels is a damaged header, not a dataset: refused here, where the file can
  // be named, rather than later as a shape the model does not expect.
  if (images.height == 0 || images.width == 0)
    fail(path, ": the header gives images of ", images.height, " x ", images.width,
         " pixels; an image needs at least one row and one column");
  // Each dimension is below 2^32, so rows * cols fits in an unsigned 64-bit product (not always
  // in a signed one: 2^32 - 1 squared is above 2^63); count * that may not, and a damaged header
  // claiming that much data is simply a file that is too short.
  const std::uint64_t per_image =
      static_cast<std::uint64_t>(images.height) * static_cast<std::uint64_t>(images.width);
  if (static_cast<std::uint64_t>(images.count) > bytes.size() / per_image)
    fail(path, ": truncated file: the header promises ", images.count, " images of ",
         images.height, " x ", images.width, " but the file has only ", bytes.size(), " bytes");
  const std::size_t pixels = static_cast<std::size_t>(images.count) * per_image;
  check_size(bytes, path, 16 + pixels,
             "16-byte header + " + std::to_string(images.count) + " images of " +
                 std::to_string(images.height) + " x " + std::to_string(images.width));
  images.pixels.assign(bytes.begin() + 16, bytes.end());
  return images;
}

std::vector<std::int64_t> read_idx_labels(const std::string& path, std::int64_t num_classes) {
  const std::vector<std::uint8_t> bytes = read_idx_bytes(path, kLabelsMagic, 8);
  const auto dims = read_idx_header(bytes, path, kLabelsMagic, "labels");
  const std::size_t count = static_cast<std::size_t>(dims[0]);
  check_size(bytes, path, 8 + count, "8-byte header + " + std::to_string(count) + " labels");
  std::vector<std::int64_t> labels(bytes.begin() + 8, bytes.end());
  for (std::size_t i = 0; i < count; ++i)
    if (labels[i] >= num_classes)
      fail(path, ": label ", labels[i], " at index ", i, "; expected 0..", num_classes - 1);
  return labels;
}

ImageDataset load_idx(const std::string& images_path, const std::string& labels_path,
                      std::vector<std::string> class_names) {
  if (class_names.empty())
    for (int d = 0; d < 10; ++d) class_names.push_back(std::to_string(d));
  IdxImages images = read_idx_images(images_path);
  // A valid IDX file may hold no images, but no dataset can: nothing to train on, evaluate or
  // normalise by. Said here, naming the file, instead of by whatever first divides by the count.
  if (images.count == 0) fail(images_path, ": holds no images (the header's count is 0)");
  std::vector<std::int64_t> labels =
      read_idx_labels(labels_path, static_cast<std::int64_t>(class_names.size()));
  if (static_cast<std::int64_t>(labels.size()) != images.count)
    fail(images_path, " holds ", images.count, " images but ", labels_path, " holds ",
         labels.size(), " labels; the counts must match");
  ImageDataset data;
  data.count = images.count;
  data.channels = 1;
  data.height = images.height;
  data.width = images.width;
  data.pixels = std::move(images.pixels);
  data.labels = std::move(labels);
  data.class_names = std::move(class_names);
  return data;
}

}  // namespace uwaga
