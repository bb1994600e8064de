// Sampling the next token and generating text: temperature 0 and top-k 1 are greedy; top-k and
// top-p only ever draw from the tokens they keep; the same seed writes the same tokens; and the
// key/value cache writes exactly what recomputing the whole window every step writes, also past
// the context window.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "core/uwaga.h"
#include "nn/sampling.h"

using namespace uwaga;
using namespace uwaga::nn;
using Catch::Contains;

namespace {

GptConfig tiny_gpt_config() {
  GptConfig c;
  c.vocab = 13, c.context = 8, c.dim = 16, c.layers = 2, c.heads = 2, c.mlp_dim = 32;
  return c;
}

std::vector<std::int64_t> generate(Gpt& gpt, const SamplingOptions& o, std::uint64_t seed,
                                   bool cache, int count) {
  TokenStream stream(gpt, {1, 2, 3}, o, seed, cache);
  for (int i = 0; i < count; ++i) stream.next();
  return stream.tokens();
}

}  // namespace

TEST_CASE("sample_token: greedy, top-k and top-p keep what they promise", "[nn][sampling]") {
  const std::vector<double> z = {0.5, 3.0, 1.0, 3.0, -2.0, 2.0};
  Generator gen(0);
  SamplingOptions greedy{.temperature = 0};
  CHECK(sample_token(z, greedy, gen) == 1);  // the lower id of the two largest
  SamplingOptions top1{.temperature = 5, .top_k = 1};
  CHECK(sample_token(z, top1, gen) == 1);
  SamplingOptions top3{.temperature = 10, .top_k = 3};  // a flat distribution over {1, 3, 5}
  std::set<std::int64_t> seen;
  for (int i = 0; i < 300; ++i) seen.insert(sample_token(z, top3, gen));
  CHECK(seen == std::set<std::int64_t>{1, 3, 5});
  // p ∝ exp(z): tokens 1 and 3 hold 0.39 each, so top-p 0.5 keeps exactly those two.
  SamplingOptions nucleus{.temperature = 1, .top_p = 0.5};
  seen.clear();
  for (int i = 0; i < 300; ++i) seen.insert(sample_token(z, nucleus, gen));
  CHECK(seen == std::set<std::int64_t>{1, 3});
  // Unrestricted, every token turns up.
  SamplingOptions all{.temperature = 3};
  seen.clear();
  for (int i = 0; i < 2000; ++i) seen.insert(sample_token(z, all, gen));
  CHECK(seen.size() == 6);
}

TEST_CASE("sample_token: NaN or +inf logits are refused naming the token; -inf rules one out",
          "[nn][sampling]") {
  const double nan = std::nan(""), inf = INFINITY;
  Generator gen(0);
  for (const SamplingOptions& o : {SamplingOptions{.temperature = 0}, SamplingOptions{.temperature = 1},
                                   SamplingOptions{.temperature = 1, .top_k = 2, .top_p = 0.5}}) {
    // A NaN among the logits made the sort's comparison no strict weak order: the token drawn
    // depended on where the NaN stood.
    CHECK_THROWS_WITH(sample_token({0.5, 3.0, nan, 1.0}, o, gen),
                      Contains("the logit of token 2 is NaN"));
    CHECK_THROWS_WITH(sample_token({nan, nan}, o, gen), Contains("the logit of token 0 is NaN"));
    CHECK_THROWS_WITH(sample_token({0.5, inf}, o, gen), Contains("the logit of token 1 is inf"));
    CHECK_THROWS_WITH(sample_token({-inf, -inf}, o, gen), Contains("every logit is -inf"));
    for (int i = 0; i < 50; ++i) CHECK(sample_token({-inf, 2.0, -inf, 1.0}, o, gen) % 2 == 1);
  }
}

TEST_CASE("SamplingOptions name the flag that cannot work", "[nn][sampling]") {
  CHECK_THROWS_WITH((SamplingOptions{.temperature = -1}.validate(10)), Contains("--temperature"));
  CHECK_THROWS_WITH((SamplingOptions{.top_k = 11}.validate(10)), Contains("--top-k"));
  CHECK_THROWS_WITH((SamplingOptions{.top_p = 0}.validate(10)), Contains("--top-p"));
  CHECK_THROWS_WITH((SamplingOptions{.top_p = 1.5}.validate(10)), Contains("--top-p"));
  CHECK_NOTHROW((SamplingOptions{.temperature = 0, .top_k = 10, .top_p = 1}.validate(10)));
}

TEST_CASE("generation: cached equals recomputed, token for token, past the window",
          "[nn][sampling]") {
  Generator gen(3);
  Gpt gpt(tiny_gpt_config(), gen);
  gpt.to(DType::Float64);
  const SamplingOptions o{.temperature = 1.0};
  // 3 prompt tokens + 30 more: the window of 8 fills and is rebuilt several times.
  const auto cached = generate(gpt, o, 11, true, 30);
  const auto recomputed = generate(gpt, o, 11, false, 30);
  CHECK(cached == recomputed);
  CHECK(generate(gpt, o, 11, true, 30) == cached);  // same seed, same text
  CHECK(generate(gpt, o, 12, true, 30) != cached);
  // Temperature 0 and top-k 1 are both greedy, whatever the seed.
  const auto greedy = generate(gpt, {.temperature = 0}, 1, true, 20);
  CHECK(generate(gpt, {.temperature = 0.7, .top_k = 1}, 2, true, 20) == greedy);
  CHECK(generate(gpt, {.temperature = 0}, 5, false, 20) == greedy);
  CHECK(gpt.is_training());  // restored after generation
}
