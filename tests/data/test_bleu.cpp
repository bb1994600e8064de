// Corpus BLEU-4: the edge cases the translator's figures rely on, and hand-computed examples.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/error.h"
#include "data/translation/bleu.h"
#include "data/translation/vocabulary.h"

using namespace uwaga;
using Catch::Contains;

namespace {
std::vector<TokenList> corpus(const std::vector<std::string>& sentences) {
  std::vector<TokenList> out;
  for (const auto& s : sentences) out.push_back(tokenize(s));
  return out;
}
}  // namespace

TEST_CASE("BLEU: a corpus against itself scores 1", "[data][bleu]") {
  const auto c = corpus({"estamos comiendo pan", "él no come el pan en la cocina",
                         "mis amigos nadan todos los días", "como"});
  const BleuScore s = corpus_bleu(c, c);
  REQUIRE(s.bleu == 1.0);
  REQUIRE(s.brevity_penalty == 1.0);
  for (double p : s.precisions) REQUIRE(p == 1.0);
  // Sentences too short for 4-grams: the missing orders are left out, still 1.
  const auto short_ones = corpus({"estamos comiendo pan", "como"});
  REQUIRE(corpus_bleu(short_ones, short_ones).bleu == 1.0);
}

TEST_CASE("BLEU: disjoint corpora score 0", "[data][bleu]") {
  const auto a = corpus({"estamos comiendo pan", "ella bebe la leche"});
  const auto b = corpus({"we are eating bread", "she drinks milk"});
  const BleuScore s = corpus_bleu(a, b);
  REQUIRE(s.bleu == 0.0);
  REQUIRE(s.precisions[0] == 0.0);
  REQUIRE(corpus_bleu(corpus({""}), corpus({"pan"})).bleu == 0.0);  // nothing produced
  REQUIRE(corpus_bleu({}, {}).bleu == 0.0);
}

TEST_CASE("BLEU: hand-computed examples", "[data][bleu]") {
  // "a b c d e" against "a b c d f": p1 = 4/5, p2 = 3/4, p3 = 2/3, p4 = 1/2, equal lengths.
  BleuScore s = corpus_bleu(corpus({"a b c d e"}), corpus({"a b c d f"}));
  REQUIRE(s.precisions[0] == Approx(0.8));
  REQUIRE(s.precisions[1] == Approx(0.75));
  REQUIRE(s.precisions[2] == Approx(2.0 / 3.0));
  REQUIRE(s.precisions[3] == Approx(0.5));
  REQUIRE(s.bleu == Approx(std::pow(0.8 * 0.75 * (2.0 / 3.0) * 0.5, 0.25)));  // 0.6687

  // Too short: every n-gram matches, but c = 4 < r = 6 gives BP = exp(1 − 6/4).
  s = corpus_bleu(corpus({"a b c d"}), corpus({"a b c d e f"}));
  REQUIRE(s.precisions[3] == 1.0);
  REQUIRE(s.brevity_penalty == Approx(std::exp(-0.5)));
  REQUIRE(s.bleu == Approx(std::exp(-0.5)));

  // Clipping: "the" counts at most as often as the reference has it.
  s = corpus_bleu(corpus({"the the the the"}), corpus({"the cat on the mat"}), 1);
  REQUIRE(s.precisions[0] == Approx(2.0 / 4.0));
  REQUIRE(s.brevity_penalty == Approx(std::exp(1.0 - 5.0 / 4.0)));

  // Corpus level: counts are pooled before dividing. Sentence 1 matches fully (3 unigrams,
  // 2 bigrams, 1 trigram, no 4-gram); sentence 2 is "a b c d e" vs "a b c d f" as above.
  s = corpus_bleu(corpus({"estamos comiendo pan", "a b c d e"}),
                  corpus({"estamos comiendo pan", "a b c d f"}));
  REQUIRE(s.precisions[0] == Approx(7.0 / 8.0));
  REQUIRE(s.precisions[1] == Approx(5.0 / 6.0));
  REQUIRE(s.precisions[2] == Approx(3.0 / 4.0));
  REQUIRE(s.precisions[3] == Approx(1.0 / 2.0));
  REQUIRE(s.bleu == Approx(std::pow(7.0 / 8 * 5.0 / 6 * 3.0 / 4 * 1.0 / 2, 0.25)));
}

TEST_CASE("BLEU: arguments are checked", "[data][bleu]") {
  REQUIRE_THROWS_WITH(corpus_bleu(corpus({"a"}), {}), Contains("1 candidates but 0 references"));
  REQUIRE_THROWS_WITH(corpus_bleu({}, {}, 5), Contains("max_order must be 1 to 4"));
}
