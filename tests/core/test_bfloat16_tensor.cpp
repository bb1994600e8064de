// bfloat16 tensors (DType::BFloat16): made, converted to and from float32 and float64 by
// core/bfloat16.h's rules, printed, moved by shape ops, refused by arithmetic, kept out of
// autograd, and stored in safetensors as PyTorch stores a torch.bfloat16 tensor
// (tests/golden/make_bfloat16_golden.py).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/bfloat16.h"
#include "core/elementwise.h"
#include "core/indexing.h"
#include "core/matmul.h"
#include "core/reduction.h"
#include "core/safetensors.h"
#include "core/shape_ops.h"
#include "core/tensor.h"
#include "tests/support/golden.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using Catch::Contains;

namespace {

float bf16_float_from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// A float32 tensor holding exactly these bit patterns.
Tensor bf16_float32_of_bits(const std::vector<std::uint32_t>& bits) {
  Tensor t = Tensor::empty({static_cast<std::int64_t>(bits.size())}, DType::Float32);
  for (std::size_t i = 0; i < bits.size(); ++i) t.data<float>()[i] = bf16_float_from_bits(bits[i]);
  return t;
}

std::vector<bfloat16_bits> bf16_bits_of(const Tensor& t) {
  const bfloat16_bits* p = t.data<bfloat16_bits>();
  return std::vector<bfloat16_bits>(p, p + t.numel());
}

bool bf16_is_nan_bits(bfloat16_bits b) { return (b & 0x7F80) == 0x7F80 && (b & 0x007F) != 0; }

std::string bf16_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The bytes of tensor `name` as they lie in the safetensors file at `path`.
std::string bf16_stored_bytes(const std::string& path, const std::string& name) {
  const SafetensorsHeader header = read_safetensors_header(path);
  const SafetensorsEntry& e = header.tensors.at(name);
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(header.data_start + e.begin));
  std::string bytes(static_cast<std::size_t>(e.end - e.begin), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(in);
  return bytes;
}

}  // namespace

TEST_CASE("bfloat16 tensors: the dtype, and zeros, full, empty and from_vector of it",
          "[core][bf16]") {
  CHECK(std::string(dtype_name(DType::BFloat16)) == "bfloat16");
  CHECK(dtype_size(DType::BFloat16) == 2);
  CHECK(dtype_of<bfloat16_bits>() == DType::BFloat16);

  const Tensor z = Tensor::zeros({2, 3}, DType::BFloat16);
  CHECK(z.dtype() == DType::BFloat16);
  CHECK(bf16_bits_of(z) == std::vector<bfloat16_bits>(6, 0x0000));
  CHECK(bf16_bits_of(Tensor::full({4}, 1.5, DType::BFloat16)) ==
        std::vector<bfloat16_bits>(4, 0x3FC0));
  CHECK(bf16_bits_of(Tensor::ones({1}, DType::BFloat16)) == std::vector<bfloat16_bits>{0x3F80});
  CHECK(Tensor::empty({0, 5}, DType::BFloat16).numel() == 0);
  const Tensor v = Tensor::from_vector({1.0, -3.0, 0.1}, {3}, DType::BFloat16);
  CHECK(bf16_bits_of(v) == std::vector<bfloat16_bits>{0x3F80, 0xC040, 0x3DCD});
  CHECK(v.to_vector() == std::vector<double>{1.0, -3.0, 0.10009765625});
  CHECK(v.at({1}) == -3.0);
  CHECK_FALSE(v.is_floating());  // stored, not computed on
}

TEST_CASE("bfloat16 tensors: float32 to bfloat16 rounds to nearest even, NaN kept, and back exact",
          "[core][bf16]") {
  struct Case {
    std::uint32_t in;
    bfloat16_bits out;
    const char* why;
  };
  const std::vector<Case> cases = {
      {0x00000000, 0x0000, "+0"},
      {0x80000000, 0x8000, "-0"},
      {0x7F800000, 0x7F80, "+inf"},
      {0xFF800000, 0xFF80, "-inf"},
      {0x3F808000, 0x3F80, "a tie goes to the even 0x3F80"},
      {0x3F818000, 0x3F82, "a tie goes to the even 0x3F82"},
      {0x3F808001, 0x3F81, "just above a tie rounds up"},
      {0x7F7F7FFF, 0x7F7F, "the largest finite bfloat16"},
      {0x7F7F8000, 0x7F80, "a tie above the largest finite value rounds to inf"},
      {0x7F7FFFFF, 0x7F80, "the largest float32 rounds to inf"},
      {0xFF7FFFFF, 0xFF80, "and its negative to -inf"},
      {0x00000001, 0x0000, "the smallest denormal rounds to +0"},
      {0x00018000, 0x0002, "a denormal tie goes to the even 0x0002"},
      {0x807FFFFF, 0x8080, "the largest negative denormal rounds up to the smallest normal"},
      {0x7FC00000, 0x7FC0, "the quiet NaN"},
      {0x7F800001, 0x7FC0, "a signalling NaN whose payload lies in the dropped half: NaN, not inf"},
      {0xFFC12345, 0xFFC1, "a negative NaN keeps its sign and top payload"},
  };
  std::vector<std::uint32_t> in;
  for (const Case& c : cases) in.push_back(c.in);
  const Tensor x = bf16_float32_of_bits(in);
  const Tensor b = x.to(DType::BFloat16);
  REQUIRE(b.dtype() == DType::BFloat16);
  REQUIRE(b.shape() == x.shape());
  const Tensor back = b.to(DType::Float32), back64 = b.to(DType::Float64);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO(cases[i].why << ": 0x" << std::hex << cases[i].in);
    const bfloat16_bits got = b.data<bfloat16_bits>()[i];
    CHECK(got == cases[i].out);
    // Back to float32 and float64: exact, the 16 bits shifted up.
    const float expected = bfloat16_to_float(got);
    CHECK(std::memcmp(&back.data<float>()[i], &expected, 4) == 0);
    if (bf16_is_nan_bits(got)) CHECK(std::isnan(back64.data<double>()[i]));
    else CHECK(back64.data<double>()[i] == static_cast<double>(expected));
  }

  // A long tensor goes through the bulk conversion (AVX512-BF16 where the CPU has it): the same
  // bits as the rule one value at a time, every bfloat16 pattern coming back exactly.
  Tensor all = Tensor::empty({65536}, DType::BFloat16);
  for (std::uint32_t i = 0; i < 65536; ++i)
    all.data<bfloat16_bits>()[i] = static_cast<bfloat16_bits>(i);
  const Tensor widened = all.to(DType::Float32);
  const Tensor narrowed = widened.to(DType::BFloat16);
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const bfloat16_bits b16 = static_cast<bfloat16_bits>(i);
    const bfloat16_bits again = narrowed.data<bfloat16_bits>()[i];
    if (bf16_is_nan_bits(b16)) REQUIRE(bf16_is_nan_bits(again));
    else REQUIRE(again == b16);
  }
  Generator gen(5);
  const Tensor r = Tensor::randn({1000}, gen, DType::Float32, 0.0, 1e3);
  const Tensor rb = r.to(DType::BFloat16);
  for (std::int64_t i = 0; i < r.numel(); ++i)
    REQUIRE(rb.data<bfloat16_bits>()[i] == float_to_bfloat16(r.data<float>()[i]));
}

TEST_CASE("bfloat16 tensors: float64 to bfloat16 rounds once, to the nearest bfloat16",
          "[core][bf16]") {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    double in;
    bfloat16_bits out;
    const char* why;
  };
  const std::vector<Case> cases = {
      {1.0 + 0x1p-8, 0x3F80, "a tie goes to the even 1"},
      {1.0 + 0x1p-8 + 0x1p-40, 0x3F81,
       "just above a tie rounds up (through float32 it is a tie, and 1: PyTorch 1.13 gives 1)"},
      {1.0 + 0x1p-8 - 0x1p-40, 0x3F80, "just below a tie rounds down"},
      {-(1.0 + 0x1p-8 + 0x1p-45), 0xBF81, "negative, just beyond a tie: to -(1 + 2⁻⁷)"},
      {0x1p-134, 0x0000, "half the smallest bfloat16 denormal: a tie, to the even +0"},
      {0x1p-134 + 0x1p-160, 0x0001, "just above it: the smallest denormal"},
      {-0x1p-134 - 0x1p-160, 0x8001, "and its negative"},
      {1e-300, 0x0000, "far below every float32: +0"},
      {-1e-300, 0x8000, "and -0"},
      {1e300, 0x7F80, "far above every float32: inf"},
      {-1e300, 0xFF80, "and -inf"},
      {inf, 0x7F80, "+inf"},
      {-inf, 0xFF80, "-inf"},
      {0x1.FFp127, 0x7F80, "the tie above the largest finite bfloat16: to the even inf"},
      {std::nextafter(0x1.FFp127, 0.0), 0x7F7F,
       "just below that tie: the largest finite (through float32 it would be the tie, and inf)"},
  };
  Tensor x = Tensor::empty({static_cast<std::int64_t>(cases.size())}, DType::Float64);
  for (std::size_t i = 0; i < cases.size(); ++i) x.data<double>()[i] = cases[i].in;
  const Tensor b = x.to(DType::BFloat16);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO(cases[i].why << ": " << cases[i].in);
    CHECK(b.data<bfloat16_bits>()[i] == cases[i].out);
    CHECK(double_to_bfloat16(cases[i].in) == cases[i].out);
  }
  CHECK(bf16_is_nan_bits(double_to_bfloat16(std::nan(""))));
  // Writing a double into a bfloat16 tensor (full, set, from_vector) rounds the same way.
  CHECK(bf16_bits_of(Tensor::full({1}, 1.0 + 0x1p-8 + 0x1p-40, DType::BFloat16)) ==
        std::vector<bfloat16_bits>{0x3F81});

  // A double that is a float32 rounds as the float32 does: every float32 edge of the rule.
  Generator gen(11);
  for (int i = 0; i < 20000; ++i) {
    const auto word = static_cast<std::uint32_t>(gen.next_u64() >> 32);
    const float f = bf16_float_from_bits(word);
    if (std::isnan(f)) continue;
    INFO("float32 0x" << std::hex << word);
    REQUIRE(double_to_bfloat16(static_cast<double>(f)) == float_to_bfloat16(f));
  }
}

TEST_CASE("bfloat16 tensors print their values and dtype", "[core][bf16]") {
  const Tensor t = Tensor::from_vector({1.0, -2.5, 0.1, 1e30}, {2, 2}, DType::BFloat16);
  CHECK(t.to_string() ==
        "tensor(shape=(2, 2), dtype=bfloat16)\n"
        "[[1, -2.5],\n"
        " [0.1001, 1e+30]]");
  CHECK(Tensor::scalar(3.0, DType::BFloat16).to_string() ==
        "tensor(shape=(), dtype=bfloat16)\n3");
}

TEST_CASE("bfloat16 tensors: arithmetic refuses them, naming the op and the way out",
          "[core][bf16]") {
  const Tensor a = Tensor::ones({2, 2}, DType::BFloat16), b = Tensor::ones({2, 2}, DType::BFloat16);
  const Tensor f = Tensor::ones({2, 2});
  const std::string way_out = "bfloat16 only stores values: compute on .to(DType::Float32)";
  CHECK_THAT(bf16_error_of([&] { add(a, b); }),
             Contains("add: expects a float32 or float64 tensor, got bfloat16 of shape (2, 2)") &&
                 Contains(way_out));
  CHECK_THAT(bf16_error_of([&] { mul(a, f); }), Contains("mul: ") && Contains(way_out));
  CHECK_THAT(bf16_error_of([&] { matmul(a, b); }), Contains("matmul: ") && Contains(way_out));
  CHECK_THAT(bf16_error_of([&] { sum(a); }), Contains("sum: ") && Contains(way_out));
  CHECK_THAT(bf16_error_of([&] { exp(a); }), Contains("exp: ") && Contains(way_out));
  Generator gen(1);
  CHECK_THAT(bf16_error_of([&] { Tensor::randn({2}, gen, DType::BFloat16); }),
             Contains("randn: ") && Contains(way_out));
  Tensor c = Tensor::zeros({2}, DType::BFloat16);
  CHECK_THAT(bf16_error_of([&] { c.requires_grad_(); }),
             Contains("requires_grad_: a bfloat16 tensor only stores values"));
}

TEST_CASE("bfloat16 tensors: shape ops move their elements as they are", "[core][bf16]") {
  Generator gen(3);
  const Tensor x = Tensor::randn({2, 3, 4}, gen);
  const Tensor b = x.to(DType::BFloat16);
  // Each op on the bfloat16 tensor gives the bits of the same op on the float32 one, rounded.
  auto same = [](const Tensor& on_bf16, const Tensor& on_float) {
    REQUIRE(on_bf16.dtype() == DType::BFloat16);
    REQUIRE(on_bf16.shape() == on_float.shape());
    CHECK(bf16_bits_of(on_bf16) == bf16_bits_of(on_float.to(DType::BFloat16)));
  };
  same(reshape(b, {6, 4}), reshape(x, {6, 4}));
  same(transpose(b, 0, 2), transpose(x, 0, 2));
  same(slice(b, 1, 1, 3), slice(x, 1, 1, 3));
  same(cat({b, b}, 1), cat({x, x}, 1));
  same(expand(slice(b, 0, 0, 1), {3, 2, 3, 4}), expand(slice(x, 0, 0, 1), {3, 2, 3, 4}));
  const Tensor ids = Tensor::from_indices({2, 0}, {2});
  same(index_select(b, 2, ids), index_select(x, 2, ids));
  same(b.clone(), x);
  Tensor into = Tensor::zeros({2, 3, 4}, DType::BFloat16);
  into.copy_from(b);
  same(into, x);
}

TEST_CASE("bfloat16 tensors are outside autograd: .to across bfloat16 records no graph",
          "[core][bf16]") {
  Tensor w = Tensor::from_vector({0.5, -1.25}, {2}).requires_grad_();
  const Tensor stored = w.to(DType::BFloat16);
  CHECK_FALSE(stored.requires_grad());
  CHECK(stored.grad_fn() == nullptr);
  const Tensor read_back = stored.to(DType::Float32);
  CHECK_FALSE(read_back.requires_grad());
  CHECK(read_back.grad_fn() == nullptr);
  CHECK(read_back.to_vector() == std::vector<double>{0.5, -1.25});
  // Between float32 and float64 .to stays differentiable.
  CHECK(w.to(DType::Float64).grad_fn() != nullptr);
}

TEST_CASE("bfloat16 tensors are stored in safetensors as PyTorch stores torch.bfloat16",
          "[core][bf16][safetensors][golden]") {
  const std::string golden = std::string(UWAGA_GOLDEN_DIR) + "/bfloat16_tensor.safetensors";
  const SafetensorsFile torch_file = load_safetensors(golden, Bf16Entries::as_bfloat16);
  const Tensor& x = torch_file.tensors.at("input.x");
  const Tensor& expected = torch_file.tensors.at("output.x");  // x.to(torch.bfloat16)
  REQUIRE(expected.dtype() == DType::BFloat16);
  REQUIRE(expected.shape() == Shape{4, 8});

  // uwaga's conversion gives PyTorch's bits (the golden holds no NaN, whose bits differ).
  const Tensor mine = x.to(DType::BFloat16);
  const std::vector<bfloat16_bits> want = bf16_bits_of(expected), got = bf16_bits_of(mine);
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": float32 " << x.data<float>()[i] << ", PyTorch 0x" << std::hex
                    << want[i] << ", uwaga 0x" << got[i]);
    CHECK(got[i] == want[i]);
  }

  // Written by uwaga: a BF16 entry whose bytes are PyTorch's, bit for bit.
  uwaga::testing::TempDir dir("bf16-safetensors");
  const std::string path = dir.file("bf16.safetensors");
  save_safetensors(path, {{"x", mine}});
  CHECK(read_safetensors_header(path).tensors.at("x").storage ==
        SafetensorsEntry::Storage::bfloat16);
  CHECK(bf16_stored_bytes(path, "x") == bf16_stored_bytes(golden, "output.x"));

  // Read back as stored, or (the default: GPT-2's import) widened to float32, exactly.
  const Tensor kept = load_safetensors(path, Bf16Entries::as_bfloat16).tensors.at("x");
  CHECK(kept.dtype() == DType::BFloat16);
  CHECK(bf16_bits_of(kept) == want);
  const Tensor widened = load_safetensors(path).tensors.at("x");
  CHECK(widened.dtype() == DType::Float32);
  CHECK(widened.to_vector() == mine.to(DType::Float32).to_vector());
}
