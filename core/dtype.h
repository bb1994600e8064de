#pragma once
// Element types. float32 trains, float64 checks gradients, int64 holds indices and labels
// (int64 tensors are never differentiated).
#include <cstddef>
#include <cstdint>

namespace uwaga {

enum class DType { Float32, Float64, Int64 };

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
  }
  return "?";
}

inline std::size_t dtype_size(DType t) { return t == DType::Float32 ? 4 : 8; }

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::Int64; }

}  // namespace uwaga
