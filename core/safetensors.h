#pragma once
// safetensors: the file format of Hugging Face checkpoints, and of uwaga's checkpoints and golden
// test files. A file is
//
//   [8 bytes]  N, the header length, an unsigned 64-bit little-endian integer
//   [N bytes]  a JSON object, padded with spaces so that 8 + N is a multiple of 8:
//                { "<name>": {"dtype": "F32" | "F64" | "I64" | "BF16", "shape": [2, 3],
//                             "data_offsets": [begin, end]},
//                  ...,
//                  "__metadata__": {"<key>": "<string value>", ...} }       (optional)
//              (reading also accepts "F16", Hugging Face's half precision, converted to
//              float32 as it is read; "BF16" is read as float32 too, or kept as bfloat16 when
//              the caller asks: Bf16Entries below)
//   [rest]     the tensors' bytes, row-major, little-endian; tensor `name` occupies
//              [begin, end) counted from the first byte after the header. The ranges tile the
//              data section exactly: no gaps, no overlaps, nothing after the last one.
//
// uwaga adds one metadata entry of its own, "uwaga.crc32": a JSON object (as a string, since
// metadata values must be strings) giving each tensor's CRC-32 (zlib's, 8 hex digits) of its
// bytes: {"fc.weight": "1c291ca3", ...}. Other readers ignore it; load_safetensors checks it, so a
// flipped bit in a tensor is refused instead of read as a slightly different number. And a second,
// "uwaga.metadata_crc32", giving every other metadata entry's CRC-32 of its value's bytes (the
// tensors' checksums included): a digit changed in a checkpoint's run configuration (a
// normalisation mean, a BPE merge) is refused, naming the entry, instead of silently changing
// what the model computes. Files without them (golden files written by numpy, checkpoints
// written before) load as before. They guard against damage and stray edits, not forgery: whoever
// edits a file on purpose can recompute them.
//
// There is no pickle and no code in the file, only a JSON index and raw numbers — which is why a
// twenty-line reader (numpy, or the one in tests/core/test_safetensors.cpp) can read it.
#include <cstdint>
#include <map>
#include <string>

#include "core/tensor.h"

namespace uwaga {

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;          // name -> tensor (fresh storage, no autograd)
  std::map<std::string, std::string> metadata;    // the "__metadata__" object, if any
};

// One tensor's entry in the header: where its bytes lie in the data section.
struct SafetensorsEntry {
  DType dtype = DType::Float32;  // the tensor's dtype once read (as_float32, below)
  // How its elements are stored: as dtype, or as 16-bit floats that become float32 when read
  // (a bfloat16 tensor when read with Bf16Entries::as_bfloat16).
  enum class Storage { native, float16, bfloat16 } storage = Storage::native;
  Shape shape;
  std::uint64_t begin = 0, end = 0;  // [begin, end) in the data section
};

// The header alone, checked as load_safetensors checks it (the byte ranges match the shapes and
// tile the data section, which ends where the file ends): what a file holds and how large it is,
// without reading or allocating its tensors.
struct SafetensorsHeader {
  std::map<std::string, SafetensorsEntry> tensors;
  std::map<std::string, std::string> metadata;  // without "uwaga.crc32", "uwaga.metadata_crc32"
  std::map<std::string, std::uint32_t> checksums;  // from "uwaga.crc32"; empty in older files
  std::uint64_t data_start = 0;  // the data section's first byte in the file
  std::uint64_t file_size = 0;
};

// Files of at least this many bytes are written around the page cache (O_DIRECT) where the file
// system allows it (core/safetensors.cpp, FileWriter).
inline constexpr std::uint64_t kSafetensorsDirectWriteBytes = std::uint64_t{64} << 20;

// The metadata keys of the tensors' and the metadata's checksums; reserved, save_safetensors
// refuses them as keys.
inline constexpr const char* kSafetensorsChecksumKey = "uwaga.crc32";
inline constexpr const char* kSafetensorsMetadataChecksumKey = "uwaga.metadata_crc32";

// Writes `tensors` (float32, float64, int64 or bfloat16; any shape, including 0-d and empty) and
// `metadata` to `path`, atomically: the data goes to a temporary file in the same directory,
// which is flushed to disk and then renamed over `path`. A crash or a full disk midway leaves
// the previous file at `path` untouched. Throws uwaga::Error naming the path on failure.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads a safetensors file, checking everything a damaged or foreign file could get wrong: the
// length prefix, the JSON, the dtypes, the shapes, and that the byte ranges match the shapes and
// tile the data section. Throws uwaga::Error naming the file and the problem.
// The checksums, when the file has them, are verified: a mismatch is an error naming the tensor.
// BF16 entries come back as float32 tensors (exact: every bfloat16 is a float32), what a model
// computing in float32 wants (GPT-2's import), or as the bfloat16 tensors stored, bit for bit
// (uwaga's checkpoints, which hold what they were given).
enum class Bf16Entries { as_float32, as_bfloat16 };
SafetensorsFile load_safetensors(const std::string& path,
                                 Bf16Entries bf16 = Bf16Entries::as_float32);

// Only the header (see SafetensorsHeader); the same errors as load_safetensors.
SafetensorsHeader read_safetensors_header(const std::string& path);

// When `metadata` (a file's "__metadata__", as read) has "uwaga.metadata_crc32": checks every
// other entry against it and removes it. An entry whose value changed, one without a checksum
// (added) or a checksum without its entry (removed) is an error naming the entry, `where` first.
// Without it (a file written before), does nothing. load_safetensors and read_safetensors_header
// call it; so does a reader of the header alone (optim/checkpoint.cpp).
void check_metadata_checksums(std::map<std::string, std::string>& metadata,
                              const std::string& where);

// zlib's CRC-32 of `bytes` bytes at `data` (the checksum stored in "uwaga.crc32").
std::uint32_t safetensors_crc32(const void* data, std::uint64_t bytes);

// "F32", "F64", "I64", "BF16": the format's names for uwaga's dtypes.
const char* safetensors_dtype_name(DType dtype);

}  // namespace uwaga
