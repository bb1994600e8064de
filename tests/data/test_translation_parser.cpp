// Reading English back into the grammar: sentences outside it are refused, a sentence's triple is
// recovered, and every sentence the grammar makes parses back into itself.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "data/translation/translation_corpus.h"
#include "data/translation/translation_parser.h"

using namespace uwaga;
using Catch::Contains;

TEST_CASE("translation parser: sentences outside the grammar are refused", "[data][translation]") {
  REQUIRE_THROWS_WITH(translate_sentence("we are eating the car"),
                      Contains("'we are eating the car' is not a sentence of the grammar"));
  REQUIRE_THROWS_WITH(translate_sentence("i am having a car"),  // stative: simple present only
                      Contains("not a sentence of the grammar"));
  REQUIRE_THROWS_WITH(translate_sentence("we swim every day now"),
                      Contains("not a sentence of the grammar"));
  REQUIRE_THROWS_WITH(translate_sentence("he eat bread"), Contains("not a sentence"));
}

TEST_CASE("translation parser: a sentence's subject-verb-object triple", "[data][translation]") {
  REQUIRE(sentence_triple("we are not eating the red apples") == "we|eat|apple");
  REQUIRE(sentence_triple("they sleep at home") == "they|sleep|-");
  REQUIRE(sentence_triple("my mother is cooking the fish in the kitchen") == "my mother|cook|fish");
  REQUIRE_THROWS_WITH(sentence_triple("we eat the car"), Contains("not a sentence of the grammar"));
}

TEST_CASE("translation parser: sampled sentences parse back into themselves", "[data][translation]") {
  using namespace translation;
  const std::vector<Triple> triples = all_triples();
  Generator gen(4);
  for (int draw = 0; draw < 2000; ++draw) {
    const Sentence s = sample_sentence(triples[gen.below(triples.size())], gen);
    const std::string english = join(english_words(s));
    INFO(english);
    const Sentence back = parse_sentence(english);
    REQUIRE(join(english_words(back)) == english);
    REQUIRE(join(spanish_words(back)) == join(spanish_words(s)));
    REQUIRE(triple_key(triple_of(back)) == triple_key(triple_of(s)));
  }
}
