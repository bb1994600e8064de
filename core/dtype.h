#pragma once
// Element types. float32 trains, float64 checks gradients, int64 holds indices and labels
// (int64 tensors are never differentiated). bfloat16 only stores values: half the bytes of
// float32, its range, 8 significant bits (the rules: core/bfloat16.h). No op computes in it and
// autograd does not reach it; convert with .to(DType::Float32) to compute, and back to store.
#include <cstddef>
#include <cstdint>

#include "core/bfloat16.h"

namespace uwaga {

enum class DType { Float32, Float64, Int64, BFloat16 };

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
    case DType::BFloat16: return "bfloat16";
  }
  return "?";
}

inline std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int64: return 8;
    case DType::BFloat16: return 2;
  }
  return 0;
}

// The C++ type of an element. A bfloat16 element is its 16 bits (bfloat16_bits, a uint16_t):
// there is no bfloat16 arithmetic to give it.
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<bfloat16_bits>() { return DType::BFloat16; }

}  // namespace uwaga
