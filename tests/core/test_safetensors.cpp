// safetensors: round trips (bfloat16 too), an independent reader, damaged files, and atomic saves.
#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/bfloat16.h"
#include "core/safetensors.h"
#include "core/tensor.h"
#include "core/threads.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using Catch::Contains;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using uwaga::testing::TempDir;

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out);
}

std::string le_u64(std::uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

// A file assembled by hand: length prefix, header text (optionally padded), data bytes.
std::string raw_file(const std::string& header, const std::string& data, bool pad = true) {
  std::string h = header;
  if (pad) h.append((8 - h.size() % 8) % 8, ' ');
  return le_u64(h.size()) + h + data;
}

template <class T> std::string bytes_of(const std::vector<T>& values) {
  std::string s(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(s.data(), values.data(), s.size());
  return s;
}

std::string bytes_of(const Tensor& t) {
  std::size_t n = static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype());
  return std::string(static_cast<const char*>(t.raw_data()), n);
}

// Same dtype, shape and bits (so NaN, -0.0 and denormals must survive unchanged).
void check_identical(const std::string& name, const Tensor& actual, const Tensor& expected) {
  INFO("tensor " << name);
  REQUIRE(actual.defined());
  CHECK(actual.dtype() == expected.dtype());
  CHECK(actual.shape() == expected.shape());
  CHECK(bytes_of(actual) == bytes_of(expected));
}

std::map<std::string, Tensor> sample_tensors() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double tiny = std::numeric_limits<double>::denorm_min();
  std::map<std::string, Tensor> t;
  t["f32"] = Tensor::from_vector({1.5, -2.25, 3.0, 0.1, -0.0, 1e-30}, {2, 3}, DType::Float32);
  t["f64"] = Tensor::from_vector({0.1, nan, -inf, tiny, -0.0, 1.0 / 3.0, 2.0, 4.0}, {2, 2, 2},
                                 DType::Float64);
  t["i64"] = Tensor::from_indices({-100, 0, 7, std::numeric_limits<std::int64_t>::max()}, {4});
  t["scalar"] = Tensor::scalar(42.5, DType::Float64);  // 0-d: shape []
  t["empty"] = Tensor::zeros({0, 3}, DType::Float32);
  t["empty_i64"] = Tensor::zeros({2, 0}, DType::Int64);
  t["blocks.0.attn.qkv.weight"] = Tensor::full({3, 1}, 0.5, DType::Float32);
  return t;
}

// ---- an independent reader ----------------------------------------------------------------
// Written from the format's description alone, sharing no code with core/safetensors.cpp.
struct MiniTensor {
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::string bytes;
};

std::map<std::string, MiniTensor> mini_read(const std::string& file, json* metadata) {
  REQUIRE(file.size() >= 8);
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t(static_cast<unsigned char>(file[i])) << (8 * i);
  REQUIRE(8 + n <= file.size());
  CHECK((8 + n) % 8 == 0);  // data section 8-byte aligned
  const std::string header = file.substr(8, n);
  CHECK(header.front() == '{');
  CHECK(header.substr(header.find_last_of('}') + 1).find_first_not_of(' ') == std::string::npos);
  const std::string data = file.substr(8 + n);
  json j = json::parse(header);
  std::map<std::string, MiniTensor> out;
  std::uint64_t covered = 0;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") {
      *metadata = it.value();
      continue;
    }
    MiniTensor t;
    t.dtype = it.value().at("dtype").get<std::string>();
    t.shape = it.value().at("shape").get<std::vector<std::int64_t>>();
    auto offsets = it.value().at("data_offsets").get<std::vector<std::uint64_t>>();
    REQUIRE(offsets.size() == 2);
    REQUIRE(offsets[0] <= offsets[1]);
    REQUIRE(offsets[1] <= data.size());
    std::uint64_t count = 1;
    for (auto d : t.shape) count *= static_cast<std::uint64_t>(d);
    std::uint64_t width = t.dtype == "F32" ? 4 : t.dtype == "BF16" ? 2 : 8;
    CHECK(offsets[1] - offsets[0] == count * width);
    t.bytes = data.substr(offsets[0], offsets[1] - offsets[0]);
    covered += offsets[1] - offsets[0];
    out[it.key()] = t;
  }
  CHECK(covered == data.size());  // with the sizes above: no gaps, no overlap, no trailing bytes
  return out;
}

// Runs load_safetensors on `bytes` written to a file and returns the error message.
std::string load_error(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.file("bad.safetensors");
  write_file_bytes(path, bytes);
  try {
    load_safetensors(path);
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("load_safetensors accepted a damaged file");
  return "";
}

// Lowers the file-size limit, so that writing past `bytes` fails with EFBIG — a disk filling up
// in the middle of a save. The signal the kernel sends by default is ignored for the duration.
struct FileSizeLimit {
  rlimit old{};
  void (*old_handler)(int) = nullptr;
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old);
    rlimit limited = old;
    limited.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limited);
    old_handler = ::signal(SIGXFSZ, SIG_IGN);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::signal(SIGXFSZ, old_handler);
  }
};

}  // namespace

TEST_CASE("safetensors: round trip of F32, F64, I64, 0-d and empty tensors with metadata",
          "[safetensors]") {
  TempDir dir;
  const std::string path = dir.file("round_trip.safetensors");
  auto tensors = sample_tensors();
  std::map<std::string, std::string> metadata = {{"dim", "8"}, {"note", "héllo \"quoted\""}};
  save_safetensors(path, tensors, metadata);

  SafetensorsFile loaded = load_safetensors(path);
  CHECK(loaded.metadata == metadata);
  REQUIRE(loaded.tensors.size() == tensors.size());
  for (const auto& [name, t] : tensors) check_identical(name, loaded.tensors.at(name), t);
  CHECK(loaded.tensors.at("scalar").dim() == 0);
  CHECK(loaded.tensors.at("scalar").item() == 42.5);
  CHECK_FALSE(loaded.tensors.at("f32").requires_grad());
  CHECK(dir.entries() == std::vector<std::string>{"round_trip.safetensors"});  // no temp left

  SECTION("without metadata and without tensors") {
    save_safetensors(path, {});
    SafetensorsFile none = load_safetensors(path);
    CHECK(none.tensors.empty());
    CHECK(none.metadata.empty());
  }
  SECTION("overwriting replaces the whole file") {
    save_safetensors(path, {{"only", Tensor::scalar(1.0, DType::Float64)}});
    SafetensorsFile replaced = load_safetensors(path);
    CHECK(replaced.tensors.size() == 1);
    CHECK(replaced.metadata.empty());
    CHECK(dir.entries() == std::vector<std::string>{"round_trip.safetensors"});
  }
}

TEST_CASE("safetensors: an independent reader reads what uwaga writes", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.file("mini.safetensors");
  save_safetensors(path, sample_tensors(), {{"epoch", "3"}});

  json metadata;
  auto mini = mini_read(read_file_bytes(path), &metadata);
  // Metadata values are strings, the checksums' too (a JSON object as text), as the format and
  // PyTorch's reader require.
  REQUIRE(metadata.size() == 3);
  CHECK(metadata["epoch"] == "3");
  REQUIRE(metadata["uwaga.crc32"].is_string());
  const json checksums = json::parse(metadata["uwaga.crc32"].get<std::string>());
  CHECK(checksums.size() == 7);
  CHECK(checksums["scalar"].get<std::string>().size() == 8);
  // The metadata's own: "epoch" and the tensors' checksums, each the CRC-32 of the value's bytes.
  REQUIRE(metadata["uwaga.metadata_crc32"].is_string());
  const json covered = json::parse(metadata["uwaga.metadata_crc32"].get<std::string>());
  CHECK(covered.size() == 2);
  CHECK(covered["epoch"] == "6dd28e9b");  // zlib.crc32(b"3")
  CHECK(covered.contains("uwaga.crc32"));
  REQUIRE(mini.size() == 7);

  CHECK(mini.at("f32").dtype == "F32");
  CHECK(mini.at("f32").shape == std::vector<std::int64_t>{2, 3});
  CHECK(mini.at("f32").bytes == bytes_of<float>({1.5f, -2.25f, 3.0f, 0.1f, -0.0f, 1e-30f}));
  CHECK(mini.at("i64").dtype == "I64");
  CHECK(mini.at("i64").bytes ==
        bytes_of<std::int64_t>({-100, 0, 7, std::numeric_limits<std::int64_t>::max()}));
  CHECK(mini.at("scalar").dtype == "F64");
  CHECK(mini.at("scalar").shape.empty());
  CHECK(mini.at("scalar").bytes == bytes_of<double>({42.5}));
  CHECK(mini.at("empty").shape == std::vector<std::int64_t>{0, 3});
  CHECK(mini.at("empty").bytes.empty());
  CHECK(mini.at("blocks.0.attn.qkv.weight").shape == std::vector<std::int64_t>{3, 1});
}

TEST_CASE("safetensors: files from other writers load (any data order, no padding)",
          "[safetensors]") {
  TempDir dir;
  const std::string path = dir.file("foreign.safetensors");
  // "b" is stored before "a", the header is not padded, metadata comes first.
  std::string header = R"({"__metadata__":{"format":"pt"},)"
                       R"("a":{"dtype":"F64","shape":[2],"data_offsets":[4,20]},)"
                       R"("b":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})";
  write_file_bytes(path, raw_file(header, bytes_of<float>({7.0f}) + bytes_of<double>({1.0, -2.0}),
                                  /*pad=*/false));
  SafetensorsFile f = load_safetensors(path);
  CHECK(f.metadata.at("format") == "pt");
  CHECK(f.tensors.at("a").to_vector() == std::vector<double>{1.0, -2.0});
  CHECK(f.tensors.at("b").item() == 7.0);
  CHECK(f.tensors.at("b").dtype() == DType::Float32);
}

TEST_CASE("safetensors: F16 and BF16 tensors are read as float32", "[safetensors]") {
  // Hugging Face's half-precision checkpoints. Every half value is a float, so the conversion is
  // exact: normals, subnormals, ±0, ±∞ and NaN.
  TempDir dir;
  const std::string path = dir.file("half.safetensors");
  const std::vector<std::uint16_t> f16 = {0x3C00, 0xC000, 0x3555, 0x0001, 0x03FF, 0x8000,
                                          0x7C00, 0xFC00, 0x7E00, 0x7BFF};
  const std::vector<std::uint16_t> bf16 = {0x3F80, 0xC040, 0x0001, 0x7F80, 0x7FC0, 0x4049};
  std::string header = R"({"h":{"dtype":"F16","shape":[2,5],"data_offsets":[0,20]},)"
                       R"("b":{"dtype":"BF16","shape":[6],"data_offsets":[20,32]}})";
  write_file_bytes(path, raw_file(header, bytes_of(f16) + bytes_of(bf16)));
  SafetensorsFile f = load_safetensors(path);
  const Tensor& h = f.tensors.at("h");
  const Tensor& b = f.tensors.at("b");
  REQUIRE(h.dtype() == DType::Float32);
  REQUIRE(h.shape() == Shape{2, 5});
  const std::vector<double> hv = h.to_vector(), bv = b.to_vector();
  CHECK(hv[0] == 1.0);
  CHECK(hv[1] == -2.0);
  CHECK(hv[2] == 0.25 * (1 + 341.0 / 1024));  // 0.333251953125
  CHECK(hv[3] == std::ldexp(1.0, -24));                            // the smallest subnormal
  CHECK(hv[4] == std::ldexp(1023.0, -24));                         // the largest subnormal
  CHECK((hv[5] == 0.0 && std::signbit(hv[5])));
  CHECK(hv[6] == std::numeric_limits<double>::infinity());
  CHECK(hv[7] == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(hv[8]));
  CHECK(hv[9] == 65504.0);  // the largest half
  CHECK(bv[0] == 1.0);
  CHECK(bv[1] == -3.0);
  CHECK(bv[2] == static_cast<double>(std::ldexp(1.0f, -133)));  // a float32 subnormal
  CHECK(bv[3] == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(bv[4]));
  CHECK(bv[5] == 3.140625);
  CHECK(read_safetensors_header(path).tensors.at("b").storage ==
        SafetensorsEntry::Storage::bfloat16);
}

TEST_CASE("safetensors: bfloat16 tensors are written as BF16 and read back bit for bit",
          "[safetensors][bf16]") {
  TempDir dir;
  const std::string path = dir.file("bf16.safetensors");
  // ±0, ±inf, NaNs with payloads (kept as they are: a file is not a conversion), a denormal,
  // the largest finite value; and an empty one, a 0-d one.
  const std::vector<bfloat16_bits> bits = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC1,
                                           0xFFA5, 0x0001, 0x7F7F, 0x3F80, 0xC049};
  Tensor b = Tensor::empty({2, 5}, DType::BFloat16);
  std::memcpy(b.raw_data(), bits.data(), bits.size() * 2);
  std::map<std::string, Tensor> tensors = {
      {"b", b},
      {"empty", Tensor::zeros({0, 4}, DType::BFloat16)},
      {"scalar", Tensor::scalar(-2.0, DType::BFloat16)},
      {"f32", Tensor::full({3}, 0.25)}};
  save_safetensors(path, tensors);

  json metadata;
  const auto mini = mini_read(read_file_bytes(path), &metadata);  // the independent reader
  CHECK(mini.at("b").dtype == "BF16");
  CHECK(mini.at("b").shape == std::vector<std::int64_t>{2, 5});
  CHECK(mini.at("b").bytes == bytes_of(bits));
  CHECK(mini.at("scalar").dtype == "BF16");

  SafetensorsFile kept = load_safetensors(path, Bf16Entries::as_bfloat16);
  for (const auto& [name, t] : tensors) check_identical(name, kept.tensors.at(name), t);
  // By default (what GPT-2's import asks for) BF16 entries are widened to float32, exactly.
  SafetensorsFile widened = load_safetensors(path);
  CHECK(widened.tensors.at("b").dtype() == DType::Float32);
  const Tensor back = widened.tensors.at("b");
  for (std::size_t i = 0; i < bits.size(); ++i) {
    const float want = bfloat16_to_float(bits[i]);
    CHECK(std::memcmp(&back.data<float>()[i], &want, 4) == 0);
  }
  CHECK(widened.tensors.at("scalar").item() == -2.0);
}

TEST_CASE("safetensors: damaged files give errors naming the file and the problem",
          "[safetensors]") {
  TempDir dir;
  const std::string bad = dir.file("bad.safetensors");
  const std::string good_path = dir.file("good.safetensors");
  save_safetensors(good_path, sample_tensors(), {{"k", "v"}});
  const std::string good = read_file_bytes(good_path);
  const std::string one_f32 = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string eight = bytes_of<float>({1.0f, 2.0f});

  SECTION("missing file") {
    const std::string missing = dir.file("missing.safetensors");
    CHECK_THROWS_WITH(load_safetensors(missing),
                      Contains(missing) && Contains("cannot open") &&
                          Contains("No such file"));
  }
  SECTION("not a regular file") {
    CHECK_THROWS_WITH(load_safetensors(dir.str()), Contains("not a regular file"));
  }
  SECTION("shorter than the length prefix") {
    CHECK_THAT(load_error(dir, "abc"), Contains(bad) && Contains("only 3 bytes") &&
                                           Contains("too short"));
    CHECK_THAT(load_error(dir, ""), Contains("only 0 bytes"));
  }
  SECTION("header length beyond the file") {
    CHECK_THAT(load_error(dir, le_u64(1000) + "{}"),
               Contains(bad) && Contains("header length 1000 exceeds the 2 bytes"));
    CHECK_THAT(load_error(dir, le_u64(std::numeric_limits<std::uint64_t>::max()) + "{}"),
               Contains("exceeds"));
  }
  SECTION("truncated data") {
    CHECK_THAT(load_error(dir, good.substr(0, good.size() - 4)),
               Contains(bad) && Contains("reach past the end of the data") &&
                   Contains("truncated"));
  }
  SECTION("truncated inside the header") {
    CHECK_THAT(load_error(dir, good.substr(0, 40)), Contains("exceeds"));
  }
  SECTION("corrupted header") {
    std::string corrupt = good;
    corrupt[8] = 'X';  // the opening brace
    CHECK_THAT(load_error(dir, corrupt), Contains(bad) && Contains("not valid JSON"));
    CHECK_THAT(load_error(dir, raw_file(R"({"x": {"dtype": "F32",)", "")),
               Contains("not valid JSON"));
    CHECK_THAT(load_error(dir, raw_file("[1, 2]", "")),
               Contains("must be a JSON object, got a JSON array"));
  }
  SECTION("repeated key") {
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                        R"("x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                                        eight + eight)),
               Contains("repeats the key \"x\""));
  }
  SECTION("unknown dtype") {
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"I8","shape":[8],"data_offsets":[0,8]}})",
                                        eight)),
               Contains(bad) && Contains("tensor 'x'") && Contains("unsupported dtype \"I8\""));
    // A half-precision tensor's bytes are 2 an element.
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F16","shape":[2],"data_offsets":[0,8]}})",
                                        eight)),
               Contains("span 8 bytes, but shape (2,) of F16 needs 4"));
  }
  SECTION("malformed entries") {
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F32","data_offsets":[0,8]}})", eight)),
               Contains("tensor 'x': missing field \"shape\""));
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})",
                                        eight)),
               Contains("non-negative integers"));
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})",
                                        eight)),
               Contains("non-negative integers"));
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8],)"
                                        R"("extra":1}})",
                                        eight)),
               Contains("unexpected field \"extra\""));
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8]}})",
                                        eight)),
               Contains("two non-negative integers"));
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296,)"
                                        R"(4294967296],"data_offsets":[0,8]}})",
                                        eight)),
               Contains("too large"));
  }
  SECTION("bad metadata") {
    CHECK_THAT(load_error(dir, raw_file(R"({"__metadata__":{"epoch":3}})", "")),
               Contains("metadata entry \"epoch\" must be a string"));
    CHECK_THAT(load_error(dir, raw_file(R"({"__metadata__":[1]})", "")),
               Contains("must be an object of strings"));
  }
  SECTION("offsets that do not match the shape") {
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F64","shape":[2],"data_offsets":[0,8]}})",
                                        eight)),
               Contains("span 8 bytes, but shape (2,) of F64 needs 16"));
  }
  SECTION("offsets out of range") {
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                                        eight)),
               Contains("reach past the end of the data (8 bytes"));
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})",
                                        "")),
               Contains("end before they begin"));
  }
  SECTION("overlapping tensors") {
    CHECK_THAT(load_error(dir, raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                        eight + "1234")),
               Contains(bad) && Contains("'a' [0, 8) and 'b' [4, 12) overlap"));
  }
  SECTION("a gap between tensors") {
    CHECK_THAT(load_error(dir, raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})",
                                        eight + "1234" + eight)),
               Contains("bytes [8, 12) of the data section belong to no tensor"));
  }
  SECTION("trailing garbage") {
    CHECK_THAT(load_error(dir, good + "garbage!"),
               Contains(bad) && Contains("8 trailing bytes after the last tensor"));
    CHECK_THAT(load_error(dir, raw_file(one_f32, eight + "x")), Contains("1 trailing bytes"));
  }
  SECTION("the reference file itself is fine") {
    write_file_bytes(bad, good);
    CHECK_NOTHROW(load_safetensors(bad));
  }
}

// A header nested a million levels deep used to crash the reader (a stack overflow in the error
// message, which printed the offending value with the recursive json::dump()).
TEST_CASE("safetensors: deeply nested or huge header values give errors, not crashes",
          "[safetensors]") {
  TempDir dir;
  const std::string shape = R"("shape":[2],)";
  const std::string offsets = R"("data_offsets":[0,8])";
  SECTION("nested a million levels deep, anywhere") {
    const std::size_t depth = 1000000;
    const std::string deep = std::string(depth, '[') + std::string(depth, ']');
    for (const std::string& header :
         {R"({"x":)" + deep + "}", R"({"x":{"dtype":)" + deep + "," + shape + offsets + "}}",
          R"({"__metadata__":{"k":)" + deep + "}}", deep}) {
      CHECK_THAT(load_error(dir, raw_file(header, "")),
                 Contains("the header nests deeper than 64 levels"));
    }
  }
  // Nested values within the limit are shown briefly in the messages.
  const std::size_t depth = 60;
  const std::string nested = std::string(depth, '[') + std::string(depth, ']');
  SECTION("a tensor entry") {
    CHECK_THAT(load_error(dir, raw_file(R"({"x":)" + nested + "}", "")),
               Contains("tensor 'x': expected an object, got [[...]]"));
  }
  SECTION("the dtype, the shape, the offsets") {
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":)" + nested + "," + shape + offsets +
                                        "}}", "")),
               Contains("unsupported dtype [[...]]"));
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F32","shape":)" + nested + "," +
                                        offsets + "}}", "")),
               Contains("shape must be a list of non-negative integers, got [[...]]"));
    CHECK_THAT(load_error(dir, raw_file(R"({"x":{"dtype":"F32",)" + shape +
                                        R"("data_offsets":)" + nested + "}}", "")),
               Contains("data_offsets must be two non-negative integers"));
  }
  SECTION("a metadata value") {
    CHECK_THAT(load_error(dir, raw_file(R"({"__metadata__":{"k":)" + nested + "}}", "")),
               Contains("metadata entry \"k\" must be a string, got [[...]]"));
  }
  SECTION("a long value is cut short in the message") {
    const std::string message = load_error(
        dir, raw_file(R"({"x":{"dtype":")" + std::string(100000, 'A') + R"(",)" + shape +
                      offsets + "}}", ""));
    CHECK_THAT(message, Contains("unsupported dtype \"AAAA") && Contains("..."));
    CHECK(message.size() < 1000);
  }
}

TEST_CASE("safetensors: saving rejects what cannot be written", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.file("out.safetensors");
  CHECK_THROWS_WITH(save_safetensors(path, {{"x", Tensor()}}),
                    Contains(path) && Contains("tensor 'x' is undefined"));
  CHECK_THROWS_WITH(save_safetensors(path, {{"__metadata__", Tensor::scalar(1.0)}}),
                    Contains("reserved for the metadata"));
  CHECK_THROWS_WITH(save_safetensors(path, {{"", Tensor::scalar(1.0)}}), Contains("empty name"));
  const std::string nowhere = dir.file("no/such/dir/out.safetensors");
  CHECK_THROWS_WITH(save_safetensors(nowhere, {{"x", Tensor::scalar(1.0)}}),
                    Contains(nowhere) && Contains("cannot create a temporary file") &&
                        Contains("No such file"));
  CHECK(dir.entries().empty());
}

TEST_CASE("safetensors: a failed save never destroys the previous file", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.file("checkpoint.safetensors");
  const std::map<std::string, Tensor> old_tensors = {
      {"w", Tensor::from_vector({1, 2, 3, 4}, {2, 2}, DType::Float64)}};
  save_safetensors(path, old_tensors, {{"step", "100"}});
  const std::string old_bytes = read_file_bytes(path);

  // The message of a save that runs into a file-size limit partway through the temporary file.
  const auto save_past_limit = [&](const std::map<std::string, Tensor>& tensors, rlim_t limit_bytes) {
    FileSizeLimit limit(limit_bytes);
    try {
      save_safetensors(path, tensors, {{"step", "200"}});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  SECTION("the disk fills up in the middle of the write") {
    // 1 MB of data against a 4 KB limit.
    const std::string message =
        save_past_limit({{"w", Tensor::zeros({1024, 128}, DType::Float64)}}, 4096);
    CHECK_THAT(message, Contains(path) && Contains("cannot write") &&
                            Contains("File too large"));
  }
  SECTION("the disk fills up in the middle of a large write (around the page cache)") {
    const std::string message = save_past_limit(
        {{"w", Tensor::zeros({static_cast<std::int64_t>(kSafetensorsDirectWriteBytes / 4) + 1})}},
        rlim_t{1} << 20);
    CHECK_THAT(message, Contains(path) && Contains("cannot write") &&
                            Contains("File too large"));
  }
  SECTION("a directory stands where the file should go") {
    // Refused before anything is written (core/output_file.h), naming what stands there.
    const std::string blocked = dir.file("blocked.safetensors");
    fs::create_directory(blocked);
    write_file_bytes(blocked + "/keep", "x");
    CHECK_THROWS_WITH(save_safetensors(blocked, old_tensors),
                      Contains(blocked) && Contains("is a directory"));
    CHECK(fs::is_directory(blocked));
    fs::remove_all(blocked);
  }
  SECTION("the tensors are invalid") {
    CHECK_THROWS_AS(save_safetensors(path, {{"w", Tensor()}}), Error);
  }

  // Whatever happened: the old file is byte-for-byte intact and no temporary file is left.
  CHECK(read_file_bytes(path) == old_bytes);
  SafetensorsFile f = load_safetensors(path);
  CHECK(f.metadata.at("step") == "100");
  check_identical("w", f.tensors.at("w"), old_tensors.at("w"));
  CHECK(dir.entries() == std::vector<std::string>{"checkpoint.safetensors"});
}

// Files of kSafetensorsDirectWriteBytes and more go around the page cache through a staging
// buffer, their last block written whole and cut back; on tmpfs (/dev/shm), which may refuse
// O_DIRECT, through the page cache after all. Either way the same bytes.
TEST_CASE("safetensors: a large file reads back bit for bit, its length exact", "[safetensors]") {
  // Not a whole number of blocks or of staging buffers; values that differ everywhere.
  const std::int64_t n = static_cast<std::int64_t>(kSafetensorsDirectWriteBytes / 4) + 1234567;
  Tensor big = Tensor::empty({n});
  float* p = big.data<float>();
  for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i) * 0.5f - 7.0f;
  const std::map<std::string, Tensor> tensors = {
      {"a", Tensor::from_vector({1, 2, 3}, {3}, DType::Float64)}, {"big", big}};
  TempDir dir;
  std::vector<std::string> paths = {dir.file("big.safetensors")};
  if (fs::is_directory("/dev/shm"))
    paths.push_back("/dev/shm/uwaga-test-" + std::to_string(::getpid()) + ".safetensors");
  for (const std::string& path : paths) {
    INFO(path);
    save_safetensors(path, tensors, {{"step", "7"}});
    const SafetensorsHeader header = read_safetensors_header(path);
    std::uint64_t data = 0;
    for (const auto& [name, e] : header.tensors) data = std::max(data, e.end);
    CHECK(header.file_size == header.data_start + data);  // no padding left at the end
    SafetensorsFile f = load_safetensors(path);  // the checksums checked as it reads
    CHECK(f.metadata.at("step") == "7");
    check_identical("a", f.tensors.at("a"), tensors.at("a"));
    check_identical("big", f.tensors.at("big"), big);
    if (path.rfind("/dev/shm/", 0) == 0) fs::remove(path);
  }
}

TEST_CASE("safetensors: numpy reads what uwaga writes", "[safetensors][python]") {
  const std::string python = "/usr/bin/python3";
  if (std::system((python + " -c 'import numpy' >/dev/null 2>&1").c_str()) != 0) {
    WARN("skipped: " << python << " with numpy is not available");
    return;
  }
  TempDir dir;
  const std::string path = dir.file("for_numpy.safetensors");
  const std::string out = dir.file("dump.json");
  std::map<std::string, Tensor> tensors = {
      {"x", Tensor::from_vector({0.1, -2.5, 3.0, 1e-300, 6.0, 7.25}, {3, 2}, DType::Float64)},
      {"h", Tensor::from_vector({0.5, -1.25}, {2}, DType::Float32)},
      {"idx", Tensor::from_indices({3, -100, 9}, {3})},
      {"s", Tensor::scalar(2.0, DType::Float64)},
      {"e", Tensor::zeros({0}, DType::Float32)}};
  save_safetensors(path, tensors, {{"dim", "8"}});

  const std::string script = std::string(UWAGA_SOURCE_DIR) + "/tests/golden/make_golden.py";
  const std::string command = python + " " + script + " --dump " + path + " > " + out;
  REQUIRE(std::system(command.c_str()) == 0);
  json dump = json::parse(read_file_bytes(out));
  CHECK(dump["metadata"]["dim"] == "8");
  CHECK(dump["metadata"]["uwaga.crc32"].is_string());
  REQUIRE(dump["tensors"].size() == tensors.size());
  const std::map<std::string, std::string> numpy_dtype = {
      {"x", "float64"}, {"h", "float32"}, {"idx", "int64"}, {"s", "float64"}, {"e", "float32"}};
  for (const auto& [name, t] : tensors) {
    INFO("tensor " << name);
    const json& d = dump["tensors"][name];
    CHECK(d["dtype"] == numpy_dtype.at(name));
    CHECK(d["shape"].get<std::vector<std::int64_t>>() == t.shape());
    CHECK(d["values"].get<std::vector<double>>() == t.to_vector());  // exact: repr round-trips
  }
}

TEST_CASE("safetensors: CRC-32 of known inputs", "[safetensors]") {
  CHECK(safetensors_crc32("", 0) == 0u);
  CHECK(safetensors_crc32("123456789", 9) == 0xcbf43926u);  // the check value of CRC-32/ISO-HDLC
  CHECK(safetensors_crc32("The quick brown fox jumps over the lazy dog", 43) == 0x414fa339u);
}

namespace {

// The reflected CRC-32 (polynomial 0xEDB88320) a byte at a time: the definition, without zlib.
std::uint32_t crc32_by_definition(const unsigned char* p, std::size_t n) {
  std::uint32_t table[256];
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

}  // namespace

TEST_CASE("safetensors: the CRC-32 of a buffer cut into pieces among threads is one pass's",
          "[safetensors]") {
  const int before = num_threads();
  set_num_threads(2);
  // Three whole pieces of 4 MiB and a short one; lengths about a piece's edge too.
  std::vector<unsigned char> bytes((std::size_t{3} << 22) + 12345);
  std::uint32_t state = 1;
  for (unsigned char& b : bytes) {
    state = state * 1664525u + 1013904223u;
    b = static_cast<unsigned char>(state >> 24);
  }
  for (const std::size_t n : {bytes.size(), std::size_t{4} << 20, (std::size_t{4} << 20) + 1,
                              (std::size_t{4} << 20) - 1, std::size_t{100}}) {
    INFO(n << " bytes");
    CHECK(safetensors_crc32(bytes.data(), n) == crc32_by_definition(bytes.data(), n));
  }
  set_num_threads(before);
}

// Before: a flipped bit that kept a value finite (1.5 -> 1.5000001) loaded silently.
TEST_CASE("safetensors: a damaged tensor is refused by its checksum, naming it", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.file("checked.safetensors");
  save_safetensors(path, sample_tensors(), {{"step", "3"}});
  const std::string good = read_file_bytes(path);
  const SafetensorsHeader header = read_safetensors_header(path);
  CHECK(header.checksums.size() == 7);
  CHECK(header.metadata == std::map<std::string, std::string>{{"step", "3"}});
  CHECK(load_safetensors(path).metadata == header.metadata);

  // The lowest mantissa bit of the first float of "f32": still a finite number.
  const SafetensorsEntry& f32 = header.tensors.at("f32");
  std::string bad = good;
  bad[header.data_start + f32.begin] ^= 1;
  CHECK_THAT(load_error(dir, bad),
             Contains("tensor 'f32' is damaged: the CRC-32 of its 24 bytes is") &&
                 Contains("the file recorded"));

  // A checksum that is not 8 hex digits, or names no tensor.
  auto with_checksums = [&](const std::string& text) {
    std::map<std::string, Tensor> one = {{"a", Tensor::full({2}, 1.0, DType::Float32)}};
    const std::string p = dir.file("one.safetensors");
    save_safetensors(p, one);
    std::string bytes = read_file_bytes(p);
    const std::uint64_t n = read_safetensors_header(p).data_start - 8;
    json h = json::parse(bytes.substr(8, n));
    h["__metadata__"]["uwaga.crc32"] = text;
    // Without the metadata's checksums, which would refuse the edit first: as a file written
    // before them.
    h["__metadata__"].erase("uwaga.metadata_crc32");
    return raw_file(h.dump(), bytes.substr(8 + n));
  };
  CHECK_THAT(load_error(dir, with_checksums(R"({"a":"xyz"})")),
             Contains("the checksum of 'a' must be 8 hexadecimal digits"));
  CHECK_THAT(load_error(dir, with_checksums(R"({"a":"00000000","b":"00000000"})")),
             Contains("has a checksum for 'b', which is not a tensor"));
  CHECK_THAT(load_error(dir, with_checksums(R"({"a":"00000000"})")),
             Contains("tensor 'a' is damaged"));
  CHECK_THAT(load_error(dir, with_checksums("[1]")), Contains("must be a JSON object"));

  // Files without checksums (numpy's, older checkpoints) load as before.
  const std::string plain = raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                     std::string(4, '\0'));
  write_file_bytes(dir.file("plain.safetensors"), plain);
  CHECK(load_safetensors(dir.file("plain.safetensors")).tensors.at("x").numel() == 1);

  CHECK_THROWS_WITH(save_safetensors(path, {}, {{"uwaga.crc32", "{}"}}),
                    Contains("reserved for the tensors' checksums"));
}

// Before: the metadata had no checksum, and 5 of 59 one-digit edits of a checkpoint's run
// configuration (a ViT's normalisation mean or std, a BPE merge) silently changed its results.
TEST_CASE("safetensors: edited metadata is refused by its checksum, naming the entry",
          "[safetensors]") {
  TempDir dir;
  const std::string path = dir.file("checked.safetensors");
  const std::map<std::string, std::string> metadata = {
      {"config", R"({"mean":[0.1307],"std":[0.3081]})"}, {"step", "3"}};
  save_safetensors(path, {{"x", Tensor::full({2}, 1.0, DType::Float32)}}, metadata);
  CHECK(load_safetensors(path).metadata == metadata);
  CHECK(read_safetensors_header(path).metadata == metadata);
  const std::string good = read_file_bytes(path);

  // One digit of the mean, the file otherwise byte for byte the same.
  std::string bad = good;
  const std::size_t digit = bad.find("0.1307");
  REQUIRE(digit != std::string::npos);
  bad[digit + 5] = '8';
  const std::string damaged = "metadata entry \"config\" is damaged or was edited: the CRC-32 "
                              "of its 32 bytes is ";
  CHECK_THAT(load_error(dir, bad), Contains("bad.safetensors'") && Contains(damaged) &&
                                       Contains("the file recorded"));
  CHECK_THROWS_WITH(read_safetensors_header(dir.file("bad.safetensors")), Contains(damaged));

  // An entry added, or one removed, since the file was written (the header rewritten around it).
  auto with_metadata = [&](const std::function<void(json&)>& edit) {
    const std::uint64_t n = read_safetensors_header(dir.file("good.safetensors")).data_start - 8;
    json h = json::parse(good.substr(8, n));
    edit(h["__metadata__"]);
    return raw_file(h.dump(), good.substr(8 + n));
  };
  write_file_bytes(dir.file("good.safetensors"), good);
  CHECK_THAT(load_error(dir, with_metadata([](json& m) { m["note"] = "hi"; })),
             Contains("metadata entry \"note\" has no checksum in \"uwaga.metadata_crc32\": it "
                      "was added after the file was written"));
  CHECK_THAT(load_error(dir, with_metadata([](json& m) { m.erase("step"); })),
             Contains("has a checksum for \"step\", which is not in the metadata"));
  CHECK_THAT(load_error(dir, with_metadata([](json& m) { m["uwaga.metadata_crc32"] = "{\"step\": 1}"; })),
             Contains("metadata \"uwaga.metadata_crc32\": the checksum of 'step' must be 8 "
                      "hexadecimal digits"));

  // A file written before the metadata had checksums loads as before, edits and all.
  const std::string older = with_metadata([](json& m) {
    m.erase("uwaga.metadata_crc32");
    m["step"] = "4";
  });
  write_file_bytes(path, older);
  CHECK(load_safetensors(path).metadata.at("step") == "4");
  CHECK(load_safetensors(path).metadata.size() == 2);

  CHECK_THROWS_WITH(save_safetensors(path, {}, {{"uwaga.metadata_crc32", "{}"}}),
                    Contains("reserved for the metadata's checksums"));
}
