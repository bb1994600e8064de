#include "core/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "core/bfloat16.h"
#include "core/json_input.h"
#include "core/output_file.h"
#include "core/regular_file.h"
#include "core/threads.h"

// The format stores numbers little-endian; we copy tensor bytes as they are in memory.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors.cpp assumes a little-endian machine");

namespace uwaga {
namespace {

using nlohmann::json;

constexpr const char* kMetadataKey = "__metadata__";

std::string quoted(const std::string& s) { return "'" + s + "'"; }

bool dtype_from_name(const std::string& name, DType* out) {
  if (name == "F32") { *out = DType::Float32; return true; }
  if (name == "F64") { *out = DType::Float64; return true; }
  if (name == "I64") { *out = DType::Int64; return true; }
  return false;
}

std::uint64_t tensor_bytes(const Tensor& t) {
  return static_cast<std::uint64_t>(t.numel()) * dtype_size(t.dtype());
}

std::string directory_of(const std::string& path) {
  std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// ---- writing --------------------------------------------------------------------------------

std::string hex32(std::uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// The JSON header, padded with spaces so that the data section starts 8-byte aligned.
std::string make_header(const std::map<std::string, Tensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {  // std::map: data laid out in name order
    std::uint64_t bytes = tensor_bytes(t);
    header[name] = {{"dtype", safetensors_dtype_name(t.dtype())},
                    {"shape", t.shape()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::map<std::string, std::string> all = metadata;
  if (!tensors.empty()) {
    json checksums = json::object();
    for (const auto& [name, t] : tensors)
      checksums[name] = hex32(safetensors_crc32(t.raw_data(), tensor_bytes(t)));
    all[kSafetensorsChecksumKey] = checksums.dump();
  }
  // Then every metadata entry's, the tensors' checksums included.
  if (!all.empty()) {
    json checksums = json::object();
    for (const auto& [key, value] : all)
      checksums[key] = hex32(safetensors_crc32(value.data(), value.size()));
    all[kSafetensorsMetadataChecksumKey] = checksums.dump();
    header[kMetadataKey] = all;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

// Writes a new file's bytes in order, then syncs them. A large file goes around the page cache
// (O_DIRECT): the save syncs every byte to the disk before its rename anyway, and copying a GPT-2
// checkpoint's 1.5 GB into fresh page-cache pages can cost more than the disk itself (a 2-core VM
// here: 336 MB/s buffered, 1.8 GB/s direct). O_DIRECT wants block-aligned addresses, lengths and
// offsets, so the bytes pass through an aligned staging buffer, the last block is written whole
// and the file then cut to its length. Where the file system refuses O_DIRECT (tmpfs, say), at
// the first write or before, the rest is written through the page cache.
class FileWriter {
 public:
  static constexpr std::size_t kBlock = 4096, kStaging = std::size_t{8} << 20;
  FileWriter(int fd, std::uint64_t total_bytes, std::string path, std::string tmp)
      : fd_(fd), path_(std::move(path)), tmp_(std::move(tmp)) {
    const int flags = ::fcntl(fd_, F_GETFL);
    direct_ = total_bytes >= kSafetensorsDirectWriteBytes && flags >= 0 &&
              ::fcntl(fd_, F_SETFL, flags | O_DIRECT) == 0;
    if (direct_) {
      staging_.reset(static_cast<unsigned char*>(std::aligned_alloc(kBlock, kStaging)));
      if (!staging_) buffered();
    }
  }

  void write(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    while (bytes > 0) {
      if (!direct_) {
        write_all(p, bytes);
        return;
      }
      const std::size_t n = std::min(bytes, kStaging - staged_);
      std::memcpy(staging_.get() + staged_, p, n);
      staged_ += n, p += n, bytes -= n;
      if (staged_ == kStaging) flush_staging();
    }
  }

  // The staged tail (a direct write pads it to a whole block), the file cut to its length, the sync.
  void finish() {
    const std::uint64_t length = written_ + staged_;
    if (staged_ > 0) {
      if (direct_) {
        const std::size_t whole = (staged_ + kBlock - 1) / kBlock * kBlock;
        std::memset(staging_.get() + staged_, 0, whole - staged_);
        staged_ = whole;
      }
      flush_staging();
    }
    if (written_ != length && ::ftruncate(fd_, static_cast<off_t>(length)) != 0)
      failed("cannot set the length of");
    if (::fsync(fd_) != 0) failed("cannot sync");
  }

 private:
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };

  void flush_staging() {
    // A file system that refuses O_DIRECT says so at the first write (EINVAL): from there on,
    // through the page cache (nothing of this buffer has been written).
    if (direct_ && written_ == 0) {
      const ssize_t n = ::write(fd_, staging_.get(), staged_);
      if (n < 0 && errno == EINVAL) {
        buffered();
      } else {
        if (n < 0) failed("cannot write");
        const std::size_t done = static_cast<std::size_t>(n);
        written_ += done;
        write_all(staging_.get() + done, staged_ - done);
        staged_ = 0;
        return;
      }
    }
    write_all(staging_.get(), staged_);
    staged_ = 0;
  }

  void buffered() {
    direct_ = false;
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT);
  }

  void write_all(const unsigned char* p, std::size_t bytes) {
    while (bytes > 0) {
      const ssize_t n = ::write(fd_, p, std::min<std::size_t>(bytes, std::size_t{1} << 30));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) failed("cannot write");
      p += n, bytes -= static_cast<std::size_t>(n), written_ += static_cast<std::uint64_t>(n);
    }
  }

  [[noreturn]] void failed(const char* what) {
    fail("save_safetensors: ", what, " ", quoted(path_), " (temporary file ", quoted(tmp_), "): ",
         std::strerror(errno));
  }

  int fd_;
  std::string path_, tmp_;
  bool direct_ = false;
  std::unique_ptr<unsigned char, Free> staging_;
  std::size_t staged_ = 0;
  std::uint64_t written_ = 0;
};

// Creates a fresh file next to `path`; O_EXCL makes sure we never write into someone else's.
int create_temporary(const std::string& path, std::string* tmp) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    *tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST)
      fail("save_safetensors: cannot create a temporary file beside ", quoted(path), " (",
           quoted(*tmp), "): ", std::strerror(errno));
  }
  fail("save_safetensors: cannot create a temporary file beside ", quoted(path),
       ": every candidate name is taken");
}

// After a rename, the new directory entry reaches the disk only once the directory is synced.
void sync_directory(const std::string& dir, const std::string& path) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    fail("save_safetensors: wrote ", quoted(path), " but cannot open its directory ",
         quoted(dir), " to sync it: ", std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  // Some file systems cannot sync directories (EINVAL); the rename is still atomic there.
  if (rc != 0 && err != EINVAL)
    fail("save_safetensors: wrote ", quoted(path), " but cannot sync its directory ",
         quoted(dir), ": ", std::strerror(err));
}

void check_savable(const std::string& path, const std::map<std::string, Tensor>& tensors,
                   const std::map<std::string, std::string>& metadata) {
  for (const auto& [name, t] : tensors) {
    if (name.empty()) fail("save_safetensors: ", quoted(path), ": a tensor has an empty name");
    if (name == kMetadataKey)
      fail("save_safetensors: ", quoted(path), ": the name \"", kMetadataKey,
           "\" is reserved for the metadata and cannot name a tensor");
    if (!t.defined())
      fail("save_safetensors: ", quoted(path), ": tensor ", quoted(name), " is undefined");
  }
  if (metadata.count(kSafetensorsChecksumKey))
    fail("save_safetensors: ", quoted(path), ": the metadata key \"", kSafetensorsChecksumKey,
         "\" is reserved for the tensors' checksums");
  if (metadata.count(kSafetensorsMetadataChecksumKey))
    fail("save_safetensors: ", quoted(path), ": the metadata key \"",
         kSafetensorsMetadataChecksumKey, "\" is reserved for the metadata's checksums");
}

// ---- reading --------------------------------------------------------------------------------

// IEEE half precision (1 sign, 5 exponent, 10 mantissa bits) as float: exact, every half is a
// float. Subnormal halves are normal floats, so their mantissa is shifted up.
float float16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF, bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf, NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // ±0
  } else {
    exponent = 127 - 15 + 1;
    while (!(mantissa & 0x400)) mantissa <<= 1, --exponent;
    bits = sign | (exponent << 23) | ((mantissa & 0x3FF) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

struct Entry : SafetensorsEntry {
  std::string name;
};

// Parses the header with bounded nesting, rejecting duplicate keys (core/json_input.h).
json parse_header(const std::string& text, const std::string& where) {
  json header = parse_json_input(text, where + ": the header");
  if (!header.is_object())
    fail(where, ": the header must be a JSON object, got a JSON ", header.type_name());
  return header;
}

std::map<std::string, std::string> parse_metadata(const json& value, const std::string& where) {
  if (!value.is_object())
    fail(where, ": \"", kMetadataKey, "\" must be an object of strings, got a JSON ",
         value.type_name());
  std::map<std::string, std::string> metadata;
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string())
      fail(where, ": metadata entry \"", key, "\" must be a string, got ", json_brief(v));
    metadata[key] = v.get<std::string>();
  }
  return metadata;
}

// "uwaga.crc32" or "uwaga.metadata_crc32" (`key`): a JSON object, name -> 8 hex digits.
std::map<std::string, std::uint32_t> parse_checksums(const std::string& text, const char* key,
                                                     const std::string& where) {
  const std::string what = where + ": metadata \"" + key + "\"";
  json value = parse_json_input(text, what);
  if (!value.is_object()) fail(what, " must be a JSON object, got a JSON ", value.type_name());
  std::map<std::string, std::uint32_t> out;
  for (const auto& [name, v] : value.items()) {
    std::string hex = v.is_string() ? v.get<std::string>() : std::string();
    std::uint32_t crc = 0;
    auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), crc, 16);
    if (hex.size() != 8 || ec != std::errc() || end != hex.data() + hex.size())
      fail(what, ": the checksum of ", quoted(name), " must be 8 hexadecimal digits, got ",
           json_brief(v));
    out[name] = crc;
  }
  return out;
}

Entry parse_entry(const std::string& name, const json& value, std::uint64_t data_size,
                  const std::string& where) {
  std::string what = where + ": tensor " + quoted(name);
  if (!value.is_object()) fail(what, ": expected an object, got ", json_brief(value));
  for (const auto& [key, v] : value.items()) {
    (void)v;
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      fail(what, ": unexpected field \"", key, "\" (expected dtype, shape, data_offsets)");
  }
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!value.contains(key)) fail(what, ": missing field \"", key, "\"");

  Entry e;
  e.name = name;
  const json& dtype = value["dtype"];
  if (dtype == "F16" || dtype == "BF16") {
    e.dtype = DType::Float32;
    e.storage = dtype == "F16" ? Entry::Storage::float16 : Entry::Storage::bfloat16;
  } else if (!dtype.is_string() || !dtype_from_name(dtype.get<std::string>(), &e.dtype)) {
    fail(what, ": unsupported dtype ", json_brief(dtype),
         " (uwaga reads F32, F64, I64, BF16, and F16 as float32)");
  }
  const std::uint64_t element_bytes = e.storage == Entry::Storage::native ? dtype_size(e.dtype) : 2;

  const json& shape = value["shape"];
  bool shape_ok = shape.is_array();
  std::uint64_t numel = 1;
  bool overflow = false;
  if (shape_ok) {
    for (const json& d : shape) {
      if (!d.is_number_unsigned() ||
          d.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
        shape_ok = false;
        break;
      }
      std::uint64_t size = d.get<std::uint64_t>();
      overflow = overflow || __builtin_mul_overflow(numel, size, &numel);
      e.shape.push_back(static_cast<std::int64_t>(size));
    }
  }
  if (!shape_ok)
    fail(what, ": shape must be a list of non-negative integers, got ", json_brief(shape));
  std::uint64_t bytes = 0;
  overflow = overflow || __builtin_mul_overflow(numel, element_bytes, &bytes);
  if (overflow) fail(what, ": shape ", json_brief(shape), " is too large");

  const json& offsets = value["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned())
    fail(what, ": data_offsets must be two non-negative integers [begin, end], got ",
         json_brief(offsets));
  e.begin = offsets[0].get<std::uint64_t>();
  e.end = offsets[1].get<std::uint64_t>();
  if (e.begin > e.end)
    fail(what, ": data_offsets [", e.begin, ", ", e.end, "] end before they begin");
  if (e.end > data_size)
    fail(what, ": data_offsets [", e.begin, ", ", e.end, "] reach past the end of the data (",
         data_size, " bytes after the header) — the file is truncated or the offsets are wrong");
  if (e.end - e.begin != bytes)
    fail(what, ": data_offsets [", e.begin, ", ", e.end, "] span ", e.end - e.begin,
         " bytes, but shape ", shape_str(e.shape), " of ", dtype.get<std::string>(), " needs ",
         bytes);
  return e;
}

// The byte ranges must tile [0, data_size): sorted by start, each begins where the last ended.
void check_tiling(std::vector<Entry>& entries, std::uint64_t data_size, const std::string& where) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t expected = 0;
  const Entry* previous = nullptr;
  for (const Entry& e : entries) {
    if (e.begin < expected)
      fail(where, ": tensors ", quoted(previous->name), " [", previous->begin, ", ",
           previous->end, ") and ", quoted(e.name), " [", e.begin, ", ", e.end,
           ") overlap in the data section");
    if (e.begin > expected)
      fail(where, ": bytes [", expected, ", ", e.begin, ") of the data section belong to no "
           "tensor (gap before ", quoted(e.name), ")");
    expected = e.end;
    previous = &e;
  }
  if (expected != data_size)
    fail(where, ": ", data_size - expected, " trailing bytes after the last tensor (the data "
         "section holds ", data_size, " bytes, the tensors cover ", expected, ")");
}

}  // namespace

const char* safetensors_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "F32";
    case DType::Float64: return "F64";
    case DType::Int64: return "I64";
    case DType::BFloat16: return "BF16";
  }
  return "?";
}

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  check_savable(path, tensors, metadata);
  const std::string header = make_header(tensors, metadata);
  unsigned char length[8];
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(header.size()) >> (8 * i));

  // A checkpoint replaces a regular file (or the one a link leads to) and nothing else.
  const OutputTarget target = output_target(path, "save_safetensors");
  if (target.character_device)
    fail("save_safetensors: ", quoted(path), " is a character device; a checkpoint is written to "
         "a regular file");
  std::string tmp;
  const int fd = create_temporary(target.path, &tmp);
  try {
    std::uint64_t total = 8 + header.size();
    for (const auto& [name, t] : tensors) total += tensor_bytes(t);
    FileWriter out(fd, total, path, tmp);
    out.write(length, 8);
    out.write(header.data(), header.size());
    for (const auto& [name, t] : tensors)
      out.write(t.raw_data(), static_cast<std::size_t>(tensor_bytes(t)));
    out.finish();
    if (::close(fd) != 0)
      fail("save_safetensors: cannot write ", quoted(path), " (closing temporary file ",
           quoted(tmp), "): ", std::strerror(errno));
  } catch (...) {
    ::close(fd);  // a second close after a failed one only returns EBADF
    ::unlink(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), target.path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail("save_safetensors: cannot move ", quoted(tmp), " to ", quoted(path), ": ",
         std::strerror(err));
  }
  sync_directory(directory_of(target.path), path);
}

namespace {

// Steps 1-3 of reading: the length prefix, the JSON header, the entries checked against the file
// size. `file` is left anywhere.
SafetensorsHeader read_header(std::FILE* file, const std::string& where) {
  struct stat st;
  if (::fstat(::fileno(file), &st) != 0) fail(where, ": cannot stat: ", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(where, ": not a regular file");
  SafetensorsHeader result;
  const std::uint64_t file_size = result.file_size = static_cast<std::uint64_t>(st.st_size);

  // 1. the header length
  if (file_size < 8)
    fail(where, ": the file is only ", file_size, " bytes long, too short to hold the 8-byte "
         "header length — truncated, or not a safetensors file");
  unsigned char length[8];
  if (std::fread(length, 1, 8, file) != 8)
    fail(where, ": cannot read the header length: ", std::strerror(errno));
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | length[i];
  if (header_size > file_size - 8)
    fail(where, ": the header length ", header_size, " exceeds the ", file_size - 8,
         " bytes that follow it — truncated, or not a safetensors file");

  // 2. the JSON header
  std::string text(static_cast<std::size_t>(header_size), '\0');
  if (header_size > 0 && std::fread(text.data(), 1, text.size(), file) != text.size())
    fail(where, ": cannot read the header: ", std::strerror(errno));
  const json header = parse_header(text, where);

  // 3. the entries, checked against the data section
  result.data_start = 8 + header_size;
  const std::uint64_t data_size = file_size - result.data_start;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == kMetadataKey) result.metadata = parse_metadata(value, where);
    else entries.push_back(parse_entry(name, value, data_size, where));
  }
  check_tiling(entries, data_size, where);
  for (Entry& e : entries) result.tensors.emplace(e.name, std::move(e));

  check_metadata_checksums(result.metadata, where);
  if (auto it = result.metadata.find(kSafetensorsChecksumKey); it != result.metadata.end()) {
    result.checksums = parse_checksums(it->second, kSafetensorsChecksumKey, where);
    result.metadata.erase(it);
    for (const auto& [name, crc] : result.checksums) {
      (void)crc;
      if (!result.tensors.count(name))
        fail(where, ": metadata \"", kSafetensorsChecksumKey, "\" has a checksum for ",
             quoted(name), ", which is not a tensor of the file");
    }
  }
  return result;
}

}  // namespace

void check_metadata_checksums(std::map<std::string, std::string>& metadata,
                              const std::string& where) {
  const auto it = metadata.find(kSafetensorsMetadataChecksumKey);
  if (it == metadata.end()) return;  // written before metadata had checksums
  const std::map<std::string, std::uint32_t> checksums =
      parse_checksums(it->second, kSafetensorsMetadataChecksumKey, where);
  metadata.erase(it);
  for (const auto& [key, value] : metadata) {
    const auto crc = checksums.find(key);
    if (crc == checksums.end())
      fail(where, ": metadata entry \"", key, "\" has no checksum in \"",
           kSafetensorsMetadataChecksumKey, "\": it was added after the file was written");
    const std::uint32_t actual = safetensors_crc32(value.data(), value.size());
    if (actual != crc->second)
      fail(where, ": metadata entry \"", key, "\" is damaged or was edited: the CRC-32 of its ",
           value.size(), " bytes is ", hex32(actual), ", the file recorded ", hex32(crc->second),
           " when it was written");
  }
  for (const auto& [key, crc] : checksums) {
    (void)crc;
    if (!metadata.count(key))
      fail(where, ": metadata \"", kSafetensorsMetadataChecksumKey, "\" has a checksum for \"",
           key, "\", which is not in the metadata: an entry was removed after the file was "
           "written");
  }
}

std::uint32_t safetensors_crc32(const void* data, std::uint64_t bytes) {
  // Large buffers in 4 MiB pieces, each piece's CRC on its own thread, then joined in order by
  // zlib's crc32_combine (the CRC of a concatenation from the parts' CRCs and the second's
  // length): the same value as one pass, at the threads' speed (a GPT-2 checkpoint is 1.5 GB).
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 22;
  const auto* p = static_cast<const Bytef*>(data);
  const auto pieces = static_cast<std::int64_t>((bytes + kPiece - 1) / kPiece);
  std::vector<uLong> crcs(static_cast<std::size_t>(pieces));
  parallel_for(pieces, pieces >= 4, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint64_t at = static_cast<std::uint64_t>(i) * kPiece;
      crcs[static_cast<std::size_t>(i)] =
          ::crc32(::crc32(0L, Z_NULL, 0), p + at, static_cast<uInt>(std::min(kPiece, bytes - at)));
    }
  });
  uLong crc = ::crc32(0L, Z_NULL, 0);
  for (std::int64_t i = 0; i < pieces; ++i) {
    const std::uint64_t at = static_cast<std::uint64_t>(i) * kPiece;
    crc = ::crc32_combine(crc, crcs[static_cast<std::size_t>(i)],
                          static_cast<z_off_t>(std::min(kPiece, bytes - at)));
  }
  return static_cast<std::uint32_t>(crc);
}

SafetensorsHeader read_safetensors_header(const std::string& path) {
  const std::string where = "load_safetensors: " + quoted(path);
  FilePtr file = open_regular_file(path, where);
  return read_header(file.get(), where);
}

SafetensorsFile load_safetensors(const std::string& path, Bf16Entries bf16) {
  const std::string where = "load_safetensors: " + quoted(path);
  FilePtr file = open_regular_file(path, where);
  SafetensorsHeader header = read_header(file.get(), where);

  // 4. the data, straight into each tensor's storage, checked against its checksum if any
  SafetensorsFile result;
  result.metadata = std::move(header.metadata);
  for (const auto& [name, e] : header.tensors) {
    const bool keep_bf16 = e.storage == SafetensorsEntry::Storage::bfloat16 &&
                           bf16 == Bf16Entries::as_bfloat16;  // its bits, as stored
    Tensor t = Tensor::empty(e.shape, keep_bf16 ? DType::BFloat16 : e.dtype);
    std::size_t bytes = static_cast<std::size_t>(e.end - e.begin);
    const bool half = e.storage != SafetensorsEntry::Storage::native && !keep_bf16;
    std::vector<std::uint16_t> halves(half ? bytes / 2 : 0);
    void* target = half ? static_cast<void*>(halves.data()) : t.raw_data();
    if (bytes > 0) {
      if (::fseeko(file.get(), static_cast<off_t>(header.data_start + e.begin), SEEK_SET) != 0 ||
          std::fread(target, 1, bytes, file.get()) != bytes)
        fail(where, ": cannot read the data of tensor ", quoted(name), ": ",
             std::ferror(file.get()) ? std::strerror(errno) : "unexpected end of file");
    }
    if (half) {
      float* out = t.data<float>();
      for (std::size_t i = 0; i < halves.size(); ++i)
        out[i] = e.storage == SafetensorsEntry::Storage::float16 ? float16_to_float(halves[i])
                                                                 : bfloat16_to_float(halves[i]);
    }
    if (auto it = header.checksums.find(name); it != header.checksums.end()) {
      const std::uint32_t crc = safetensors_crc32(target, bytes);
      if (crc != it->second)
        fail(where, ": tensor ", quoted(name), " is damaged: the CRC-32 of its ", bytes,
             " bytes is ", hex32(crc), ", the file recorded ", hex32(it->second),
             " when it was written");
    }
    result.tensors.emplace(name, std::move(t));
  }
  return result;
}

}  // namespace uwaga
