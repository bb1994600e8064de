// The GPT: parity with PyTorch (untied and tied heads), a float64 gradient check, causality (no
// position sees a later token), configuration errors, and the key/value cache giving the numbers
// of a full pass.
#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/gpt.h"
#include "tests/support/gradcheck.h"
#include "tests/support/parity.h"

using namespace uwaga;
using namespace uwaga::nn;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

GptConfig small_config(bool tied = false) {
  GptConfig c;
  c.vocab = 11, c.context = 6, c.dim = 8, c.layers = 2, c.heads = 2, c.mlp_dim = 16;
  c.tie_weights = tied;
  return c;
}

Tensor random_ids(std::int64_t B, std::int64_t T, std::int64_t vocab, std::uint64_t seed) {
  Generator gen(seed);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(B * T));
  for (auto& id : ids) id = static_cast<std::int64_t>(gen.below(static_cast<std::uint64_t>(vocab)));
  return Tensor::from_indices(ids, {B, T});
}

}  // namespace

TEST_CASE("the GPT matches PyTorch", "[nn][gpt][golden]") {
  Generator gen(0);
  Gpt gpt(small_config(), gen);
  check_parity("gpt", gpt, [&](auto& in) { return gpt.forward(in.at("ids")); });
}

TEST_CASE("the GPT with a tied head matches PyTorch", "[nn][gpt][golden]") {
  Generator gen(0);
  Gpt gpt(small_config(true), gen);
  REQUIRE(gpt.head == nullptr);
  check_parity("gpt_tied", gpt, [&](auto& in) { return gpt.forward(in.at("ids")); });
}

TEST_CASE("the GPT passes gradcheck", "[nn][gpt]") {
  for (bool tied : {false, true}) {
    Generator gen(1);
    GptConfig c = small_config(tied);
    c.layers = 1;
    Gpt gpt(c, gen);
    gpt.to(DType::Float64);
    const Tensor ids = random_ids(2, 5, c.vocab, 7);
    std::vector<Tensor> inputs;
    for (auto& p : gpt.parameters()) inputs.push_back(p);
    require_gradcheck([&](const std::vector<Tensor>&) { return gpt.forward(ids); }, inputs);
  }
}

TEST_CASE("GPT: position t depends on tokens 0 … t only", "[nn][gpt]") {
  Generator gen(2);
  Gpt gpt(small_config(), gen);
  gpt.to(DType::Float64);
  Tensor ids = random_ids(1, 6, 11, 3);
  const Tensor before = gpt.forward(ids);  // (1, 6, 11)
  ids.set({0, 4}, static_cast<double>((ids.to_indices()[4] + 1) % 11));
  const Tensor after = gpt.forward(ids);
  for (std::int64_t t = 0; t < 6; ++t) {
    double diff = 0;
    for (std::int64_t v = 0; v < 11; ++v)
      diff = std::max(diff, std::abs(before.at({0, t, v}) - after.at({0, t, v})));
    if (t < 4) CHECK(diff == 0);
    else CHECK(diff > 1e-6);
  }
}

TEST_CASE("GPT: initialisation, names and configuration errors", "[nn][gpt]") {
  Generator gen(0);
  GptConfig c = small_config();
  c.layers = 8, c.dim = 64, c.heads = 4, c.mlp_dim = 256;
  Gpt gpt(c, gen);
  const auto names = gpt.named_parameters();
  REQUIRE(names[0].first == "token_embed.weight");
  REQUIRE(names[1].first == "pos_embed.weight");
  REQUIRE(names[2].first == "blocks.0.norm1.weight");
  REQUIRE(names.back().first == "head.weight");
  auto std_of = [](const Tensor& t) {
    double s = 0;
    for (std::int64_t i = 0; i < t.numel(); ++i) s += t.flat(i) * t.flat(i);
    return std::sqrt(s / static_cast<double>(t.numel()));
  };
  CHECK(std_of(gpt.blocks[0]->attn->qkv->weight) == Approx(0.02).epsilon(0.05));
  CHECK(std_of(gpt.blocks[0]->mlp->fc2->weight) == Approx(0.02 / 4).epsilon(0.05));  // 1/√(2·8)
  CHECK(std_of(gpt.blocks[0]->attn->proj->weight) == Approx(0.02 / 4).epsilon(0.1));

  GptConfig bad = small_config();
  bad.heads = 3;
  CHECK_THROWS_WITH(bad.validate(), Contains("dim 8 is not divisible by heads 3"));
  bad = small_config();
  bad.dropout = 1;
  CHECK_THROWS_WITH(bad.validate(), Contains("dropout"));
  CHECK(GptConfig::from_json(small_config().to_json()).to_json() == small_config().to_json());
  Gpt small(small_config(), gen);
  CHECK_THROWS_WITH(small.forward(random_ids(1, 7, 11, 0)), Contains("context of 6"));
  CHECK_THROWS_WITH(small.forward(Tensor::from_indices({3, 11}, {1, 2})),
                    Contains("outside the vocabulary of 11"));
}

TEST_CASE("GPT: the key/value cache gives the logits of a full pass", "[nn][gpt]") {
  for (bool tied : {false, true}) {
    Generator gen(4);
    Gpt gpt(small_config(tied), gen);
    gpt.to(DType::Float64);
    gpt.eval();
    NoGradGuard no_grad;
    const Tensor ids = random_ids(2, 6, 11, 5);  // (2, 6)
    const Tensor full = gpt.forward(ids);        // (2, 6, 11)
    KvCache cache;
    // The prompt's 3 tokens at once, then one token at a time.
    Tensor last = gpt.forward_cached(slice(ids, 1, 0, 3), cache);  // (2, 11)
    for (std::int64_t t = 2; t < 6; ++t) {
      if (t > 2) last = gpt.forward_cached(slice(ids, 1, t, t + 1), cache);
      REQUIRE(cache.length() == t + 1);
      for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t v = 0; v < 11; ++v)
          REQUIRE(last.at({b, v}) == Approx(full.at({b, t, v})).margin(1e-12));
    }
    CHECK_THROWS_WITH(gpt.forward_cached(slice(ids, 1, 0, 1), cache), Contains("context of 6"));
    CHECK_THROWS_WITH(gpt.forward_cached(slice(ids, 1, 0, 2), cache), Contains("one token"));
  }
}

TEST_CASE("the GPT keeps its causal attention maps on request", "[nn][gpt]") {
  Generator gen(3);
  Gpt gpt(small_config(), gen);
  gpt.forward(random_ids(2, 5, 11, 4));
  REQUIRE(!gpt.attention_maps()[0].defined());  // nothing kept unless asked
  gpt.keep_attention(true);
  gpt.forward(random_ids(2, 5, 11, 4));
  const std::vector<Tensor> maps = gpt.attention_maps();
  REQUIRE(maps.size() == 2);
  for (const Tensor& A : maps) {
    REQUIRE(A.shape() == Shape{2, 2, 5, 5});  // (B, h, T, T)
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t k = 0; k < 2; ++k)
        for (std::int64_t t = 0; t < 5; ++t) {
          double row = 0;
          for (std::int64_t s = 0; s < 5; ++s) {
            if (s > t) REQUIRE(A.at({b, k, t, s}) == 0.0);  // no weight on a later token
            row += A.at({b, k, t, s});
          }
          REQUIRE(row == Approx(1.0));
          REQUIRE(A.at({b, k, t, t}) > 0.0);
        }
  }
}
