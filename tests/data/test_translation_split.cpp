// The generalisation split: held-out triples never occur in training, and sizes or fractions the
// grammar cannot meet fail at once, naming the option to change.
#include <catch2/catch.hpp>

#include <set>

#include "core/error.h"
#include "data/translation/translation_corpus.h"
#include "tests/data/small_translation_corpus.h"

using namespace uwaga;
using uwaga::testing::small_translation_corpus;
using Catch::Contains;

namespace {

bool well_formed(const std::string& s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ' || s.find("  ") != std::string::npos)
    return false;
  for (unsigned char c : s)
    if (c < 0x80 && (std::isupper(c) || std::ispunct(c) || (std::isspace(c) && c != ' ')))
      return false;
  return true;
}

}  // namespace

TEST_CASE("translation split: test triples never occur in training", "[data][translation]") {
  const TranslationCorpus corpus = generate_translation_corpus(small_translation_corpus(3));
  REQUIRE(corpus.train.size() == 3000);
  REQUIRE(corpus.valid.size() == 300);
  REQUIRE(corpus.test.size() == 300);
  REQUIRE(translation_triple_count() > 3000);
  std::set<std::string> train, valid, test, english;
  for (const auto& p : corpus.train) train.insert(sentence_triple(p.english));
  for (const auto& p : corpus.valid) valid.insert(sentence_triple(p.english));
  for (const auto& p : corpus.test) test.insert(sentence_triple(p.english));
  for (const std::string& t : test) {
    INFO(t);
    REQUIRE(train.count(t) == 0);
    REQUIRE(valid.count(t) == 0);
  }
  for (const std::string& t : valid) REQUIRE(train.count(t) == 0);
  REQUIRE(test.size() > 100);  // many distinct unseen triples, not a handful

  // Each pair is well formed, distinct, and its Spanish is what the grammar says.
  for (const auto* split : {&corpus.train, &corpus.valid, &corpus.test})
    for (const auto& p : *split) {
      INFO(p.english << " => " << p.spanish);
      REQUIRE(well_formed(p.english));
      REQUIRE(well_formed(p.spanish));
      REQUIRE(english.insert(p.english).second);
      REQUIRE(translate_sentence(p.english) == p.spanish);
    }
}

TEST_CASE("translation split: options are checked", "[data][translation]") {
  TranslationCorpusOptions options = small_translation_corpus(0);
  options.test_fraction = 0.6;
  options.valid_fraction = 0.5;
  REQUIRE_THROWS_WITH(generate_translation_corpus(options),
                      Contains("leave some triples for training"));
}

TEST_CASE("translation split: sizes the grammar cannot meet fail at once and name the option",
          "[data][translation]") {
  // The grammar makes a few million distinct sentences; asking for more used to sample for
  // minutes (100 attempts per sentence asked for) while memory grew.
  TranslationCorpusOptions options;
  options.train_size = 1000000000;
  REQUIRE_THROWS_WITH(generate_translation_corpus(options),
                      Contains("train_size 1000000000 cannot be met") &&
                          Contains("distinct sentences") && Contains("at most"));
  options.train_size = 1000000000000;
  REQUIRE_THROWS_WITH(generate_translation_corpus(options), Contains("train_size 1000000000000"));
  options = {};
  options.valid_size = 1000000000;
  REQUIRE_THROWS_WITH(generate_translation_corpus(options),
                      Contains("valid_size 1000000000 cannot be met") &&
                          Contains("valid_fraction"));
  options = {};
  options.test_size = 1000000000000;
  REQUIRE_THROWS_WITH(generate_translation_corpus(options),
                      Contains("test_size 1000000000000 cannot be met") &&
                          Contains("test_fraction"));
  options = {};
  options.valid_size = -5;
  REQUIRE_THROWS_WITH(generate_translation_corpus(options),
                      Contains("valid_size -5") && Contains("must be >= 0"));
}

TEST_CASE("translation split: too few training sentences are blamed on train_size",
          "[data][translation]") {
  // Held-out sentences may use only words of the training sentences; one training sentence
  // ("we are eating bread") leaves almost none to use.
  TranslationCorpusOptions options;
  options.train_size = 1;
  REQUIRE_THROWS_WITH(generate_translation_corpus(options),
                      Contains("train_size 1 is too small") && Contains("valid_size 1000"));
  // Without held-out sentences one training sentence is a corpus.
  options.valid_size = options.test_size = 0;
  const TranslationCorpus one = generate_translation_corpus(options);
  REQUIRE(one.train.size() == 1);
  REQUIRE(one.train[0].english == "we are eating bread");
}
