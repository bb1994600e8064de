// The golden-file helpers themselves: loading, lookups, and that check_close's comparison catches
// a perturbed tensor (a comparison that always passes would make every parity test worthless).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tests/support/golden.h"

using namespace uwaga;
using namespace uwaga::testing;
using Catch::Contains;

TEST_CASE("golden: load a file and look up tensors and metadata", "[golden]") {
  Golden g = load_golden("linear");
  CHECK(g.metadata_int("in_features") == 8);
  CHECK(g.metadata_int("out_features") == 6);
  CHECK(g.metadata("batch") == "2");

  const Tensor& x = g.get("input.x");
  CHECK(x.dtype() == DType::Float64);
  CHECK(x.shape() == Shape{2, 3, 8});
  CHECK(g.get("param.weight").shape() == Shape{6, 8});  // (out, in), as nn.Linear
  CHECK(g.get("param.bias").shape() == Shape{6});
  CHECK(g.get("output.y").shape() == Shape{2, 3, 6});
  CHECK(g.keys("param.") == std::vector<std::string>{"param.bias", "param.weight"});
  CHECK(g.keys("grad.param.") ==
        std::vector<std::string>{"grad.param.bias", "grad.param.weight"});

  CHECK_THROWS_WITH(g.get("output.z"), Contains("linear.safetensors") &&
                                           Contains("no tensor 'output.z'") &&
                                           Contains("output.y"));
  CHECK_THROWS_WITH(g.metadata("heads"), Contains("no metadata 'heads'") &&
                                             Contains("in_features"));
  CHECK_THROWS_WITH(load_golden("no_such_module"),
                    Contains("no_such_module.safetensors") && Contains("cannot open"));

  Golden ln = load_golden("layer_norm");
  CHECK(ln.metadata_double("eps") == 1e-5);
  CHECK_THROWS_WITH(ln.metadata_int("eps"), Contains("is not an integer"));
}

TEST_CASE("golden: the linear file is consistent with y = x W^T + b", "[golden]") {
  // A check of the golden data itself, with plain loops: PyTorch's y and our reading of it agree.
  Golden g = load_golden("linear");
  const Tensor &x = g.get("input.x"), &w = g.get("param.weight"), &b = g.get("param.bias");
  Tensor y = Tensor::zeros({2, 3, 6}, DType::Float64);
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t t = 0; t < 3; ++t)
      for (std::int64_t o = 0; o < 6; ++o) {
        double sum = b.at({o});
        for (std::int64_t k = 0; k < 8; ++k) sum += x.at({i, t, k}) * w.at({o, k});
        y.set({i, t, o}, sum);
      }
  check_close("linear y (loops)", y, g.get("output.y"), 1e-12, 1e-12);
}

TEST_CASE("golden: check_close detects differences", "[golden]") {
  Golden g = load_golden("mha_self");
  const Tensor& y = g.get("output.y");  // (2, 4, 8)

  check_close("identical", y, y, 0.0, 0.0);
  CHECK(all_close(y, y.clone(), 0.0, 0.0));
  CHECK(all_close(y.to(DType::Float32), y, 1e-6, 1e-6));  // float32 copy within float32 error
  CHECK_FALSE(all_close(y.to(DType::Float32), y, 1e-12, 0.0));

  Tensor perturbed = y.clone();
  perturbed.set({1, 2, 5}, perturbed.at({1, 2, 5}) + 1e-4);
  CHECK_FALSE(all_close(perturbed, y, 1e-6, 1e-6));
  CHECK(all_close(perturbed, y, 1e-3, 0.0));
  CHECK(all_close(perturbed, y, 0.0, 1e-4 / std::fabs(y.at({1, 2, 5})) * 1.01));

  CloseReport report = compare_close("perturbed y", perturbed, y, 1e-6, 1e-6);
  CHECK_FALSE(report.ok);
  CHECK_THAT(report.message, Contains("perturbed y: NOT OK") &&
                                 Contains("1 of 64 values outside") &&
                                 Contains("at flat index 53 (1, 2, 5)") &&
                                 Contains("first values, actual:"));
  CHECK_THAT(compare_close("same", y, y, 0, 0).message, Contains("same: OK"));

  SECTION("shape mismatch") {
    CloseReport r = compare_close("reshaped", Tensor::zeros({8, 8}, DType::Float64), y, 1, 1);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.message, Contains("shapes differ: actual (8, 8), expected (2, 4, 8)"));
  }
  SECTION("NaN never compares close") {
    Tensor with_nan = y.clone();
    with_nan.set_flat(0, std::numeric_limits<double>::quiet_NaN());
    CHECK_FALSE(all_close(with_nan, y, 1e9, 1e9));
    CHECK_FALSE(all_close(y, with_nan, 1e9, 1e9));
  }
  SECTION("undefined tensors") {
    CHECK_FALSE(all_close(Tensor(), y, 1, 1));
    CHECK_THAT(compare_close("missing", y, Tensor(), 1, 1).message,
               Contains("expected tensor is undefined"));
  }
  SECTION("every golden file loads, holds float64 or int64, and has non-zero gradients") {
    for (const char* name :
         {"linear", "layer_norm", "mha_self", "mha_self_causal", "mha_self_padded", "mha_cross",
          "mha_cross_padded", "mlp", "encoder_block", "decoder_block", "cross_entropy",
          "optim_sgd", "optim_sgd_nesterov", "optim_adam", "optim_adamw",
          "schedule_warmup_cosine"}) {
      INFO("golden file " << name);
      Golden file = load_golden(name);
      CHECK_FALSE(file.file.metadata.empty());
      for (const auto& [key, t] : file.file.tensors) {
        INFO("tensor " << key);
        CHECK((t.dtype() == DType::Float64 || t.dtype() == DType::Int64));
        if (key.rfind("grad.", 0) == 0) {
          double largest = 0;
          for (double v : t.to_vector()) largest = std::max(largest, std::fabs(v));
          CHECK(largest > 0);  // a gradient of all zeros would let a wrong backward pass
        }
      }
    }
  }
}
