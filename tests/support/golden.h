#pragma once
// Test helpers for PyTorch parity: load a golden file written by tests/golden/make_golden.py and
// compare tensors with |actual - expected| <= atol + rtol·|expected|, printing, on failure, the
// first values of both and where the largest difference is (as llm.c's test does).
//
//   Golden g = load_golden("layer_norm");
//   Tensor x = g.get("input.x");
//   ...
//   check_close("layer_norm y", y, g.get("output.y"), 1e-12, 1e-10);
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/safetensors.h"
#include "core/tensor.h"

#ifndef UWAGA_GOLDEN_DIR
#error "UWAGA_GOLDEN_DIR must be defined (tests/CMakeLists.txt does it)"
#endif

namespace uwaga::testing {

struct Golden {
  std::string name;  // "mha_self"
  std::string path;  // .../tests/golden/mha_self.safetensors
  SafetensorsFile file;

  bool has(const std::string& key) const { return file.tensors.count(key) != 0; }

  // The tensor stored under `key` ("output.y", "param.attn.qkv.weight", ...).
  const Tensor& get(const std::string& key) const {
    auto it = file.tensors.find(key);
    if (it == file.tensors.end())
      fail("golden file ", path, " has no tensor '", key, "'; it holds: ", list(keys()));
    return it->second;
  }

  // Every tensor name starting with `prefix`, sorted ("param." gives the parameters).
  std::vector<std::string> keys(const std::string& prefix = "") const {
    std::vector<std::string> out;
    for (const auto& entry : file.tensors)
      if (entry.first.compare(0, prefix.size(), prefix) == 0) out.push_back(entry.first);
    return out;
  }

  const std::string& metadata(const std::string& key) const {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end()) {
      std::vector<std::string> present;
      for (const auto& entry : file.metadata) present.push_back(entry.first);
      fail("golden file ", path, " has no metadata '", key, "'; it holds: ", list(present));
    }
    return it->second;
  }

  std::int64_t metadata_int(const std::string& key) const {
    const std::string& text = metadata(key);
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size())
      fail("golden file ", path, ": metadata '", key, "' = \"", text, "\" is not an integer");
    return value;
  }

  double metadata_double(const std::string& key) const {
    const std::string& text = metadata(key);
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size())
      fail("golden file ", path, ": metadata '", key, "' = \"", text, "\" is not a number");
    return value;
  }

 private:
  static std::string list(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "(nothing)" : out;
  }
};

// Loads UWAGA_GOLDEN_DIR/<name>.safetensors.
inline Golden load_golden(const std::string& name) {
  Golden g;
  g.name = name;
  g.path = std::string(UWAGA_GOLDEN_DIR) + "/" + name + ".safetensors";
  g.file = load_safetensors(g.path);  // throws, naming the path, if missing or damaged
  return g;
}

// ---- comparing tensors ---------------------------------------------------------------------

// Any dtype, as doubles, in row-major order.
inline std::vector<double> values_of(const Tensor& t) {
  std::vector<double> out(static_cast<std::size_t>(t.numel()));
  switch (t.dtype()) {
    case DType::Float32: std::copy(t.data<float>(), t.data<float>() + out.size(), out.begin()); break;
    case DType::Float64: std::copy(t.data<double>(), t.data<double>() + out.size(), out.begin()); break;
    case DType::Int64:
      std::transform(t.data<std::int64_t>(), t.data<std::int64_t>() + out.size(), out.begin(),
                     [](std::int64_t v) { return static_cast<double>(v); });
      break;
    case DType::BFloat16:
      std::transform(t.data<bfloat16_bits>(), t.data<bfloat16_bits>() + out.size(), out.begin(),
                     [](bfloat16_bits v) { return static_cast<double>(bfloat16_to_float(v)); });
      break;
  }
  return out;
}

struct CloseReport {
  bool ok = false;
  std::string message;  // one line when ok; the diagnosis otherwise
};

// Compares element-wise: |a - e| <= atol + rtol·|e|. NaN anywhere is a mismatch.
inline CloseReport compare_close(const std::string& what, const Tensor& actual,
                                 const Tensor& expected, double atol, double rtol) {
  CloseReport r;
  std::ostringstream msg;
  msg << std::setprecision(10);
  if (!actual.defined() || !expected.defined()) {
    msg << what << ": NOT OK — the " << (actual.defined() ? "expected" : "actual")
        << " tensor is undefined";
    r.message = msg.str();
    return r;
  }
  if (actual.shape() != expected.shape()) {
    msg << what << ": NOT OK — shapes differ: actual " << shape_str(actual.shape())
        << ", expected " << shape_str(expected.shape());
    r.message = msg.str();
    return r;
  }
  const std::vector<double> a = values_of(actual), e = values_of(expected);
  std::size_t bad = 0, worst = 0;
  double worst_diff = -1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    double diff = std::fabs(a[i] - e[i]);
    if (std::isnan(diff)) diff = std::numeric_limits<double>::infinity();
    if (!(diff <= atol + rtol * std::fabs(e[i]))) ++bad;
    if (diff > worst_diff) {
      worst_diff = diff;
      worst = i;
    }
  }
  r.ok = bad == 0;
  msg << what << ": " << (r.ok ? "OK" : "NOT OK") << " — shape " << shape_str(actual.shape())
      << ", " << bad << " of " << a.size() << " values outside atol " << atol << " + rtol "
      << rtol << "·|expected|";
  if (a.empty()) {
    r.message = msg.str();
    return r;
  }
  // The flat index of the largest difference, unravelled into a multi-index.
  std::vector<std::int64_t> index(actual.shape().size());
  std::int64_t rest = static_cast<std::int64_t>(worst);
  for (std::size_t d = index.size(); d-- > 0;) {
    index[d] = rest % actual.shape()[d];
    rest /= actual.shape()[d];
  }
  msg << "\n  largest |difference| " << worst_diff << " at flat index " << worst << " "
      << shape_str(index) << ": actual " << a[worst] << ", expected " << e[worst]
      << " (allowed " << atol + rtol * std::fabs(e[worst]) << ")";
  const std::size_t shown = std::min<std::size_t>(a.size(), 6);
  msg << "\n  first values, actual:  ";
  for (std::size_t i = 0; i < shown; ++i) msg << (i ? ", " : "") << a[i];
  msg << "\n  first values, expected:";
  for (std::size_t i = 0; i < shown; ++i) msg << (i ? ", " : " ") << e[i];
  r.message = msg.str();
  return r;
}

// True when every element is within atol + rtol·|expected| (and the shapes match). Records no
// Catch assertion, so tests can check that a comparison *fails*.
inline bool all_close(const Tensor& actual, const Tensor& expected, double atol, double rtol) {
  return compare_close("", actual, expected, atol, rtol).ok;
}

// A Catch2 check: passes silently, or fails printing the diagnosis from compare_close.
inline void check_close(const std::string& what, const Tensor& actual, const Tensor& expected,
                        double atol, double rtol) {
  CloseReport r = compare_close(what, actual, expected, atol, rtol);
  INFO(r.message);
  CHECK(r.ok);
}

}  // namespace uwaga::testing
