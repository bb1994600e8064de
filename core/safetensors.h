#pragma once
// safetensors: the file format of Hugging Face checkpoints, and of uwaga's checkpoints and golden
// test files. A file is
//
//   [8 bytes]  N, the header length, an unsigned 64-bit little-endian integer
//   [N bytes]  a JSON object, padded with spaces so that 8 + N is a multiple of 8:
//                { "<name>": {"dtype": "F32" | "F64" | "I64", "shape": [2, 3],
//                             "data_offsets": [begin, end]},
//                  ...,
//                  "__metadata__": {"<key>": "<string value>", ...} }       (optional)
//   [rest]     the tensors' bytes, row-major, little-endian; tensor `name` occupies
//              [begin, end) counted from the first byte after the header. The ranges tile the
//              data section exactly: no gaps, no overlaps, nothing after the last one.
//
// There is no pickle and no code in the file, only a JSON index and raw numbers — which is why a
// twenty-line reader (numpy, or the one in tests/core/test_safetensors.cpp) can read it.
#include <map>
#include <string>

#include "core/tensor.h"

namespace uwaga {

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;          // name -> tensor (fresh storage, no autograd)
  std::map<std::string, std::string> metadata;    // the "__metadata__" object, if any
};

// Writes `tensors` (float32, float64 or int64; any shape, including 0-d and empty) and
// `metadata` to `path`, atomically: the data goes to a temporary file in the same directory,
// which is flushed to disk and then renamed over `path`. A crash or a full disk midway leaves
// the previous file at `path` untouched. Throws uwaga::Error naming the path on failure.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads a safetensors file, checking everything a damaged or foreign file could get wrong: the
// length prefix, the JSON, the dtypes, the shapes, and that the byte ranges match the shapes and
// tile the data section. Throws uwaga::Error naming the file and the problem.
SafetensorsFile load_safetensors(const std::string& path);

// "F32", "F64", "I64": the format's names for uwaga's dtypes.
const char* safetensors_dtype_name(DType dtype);

}  // namespace uwaga
