// The toy English -> Spanish corpus as a whole: the running example first, the same corpus for the
// same seed, and the presets' corpora exactly as they were. The parts have their own tests:
// test_translation_lexicon, _grammar, _parser and _split.
#include <catch2/catch.hpp>

#include "data/translation/translation_corpus.h"
#include "tests/data/small_translation_corpus.h"

using namespace uwaga;
using uwaga::testing::small_translation_corpus;

namespace {

// FNV-1a over every pair of every split, in order: a fingerprint of a whole corpus.
std::uint64_t corpus_hash(const TranslationCorpus& corpus) {
  std::uint64_t h = 14695981039346656037ull;
  auto add = [&](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // a separator no UTF-8 text contains
  };
  for (const auto* split : {&corpus.train, &corpus.valid, &corpus.test}) {
    for (const TranslationPair& p : *split) add(p.english), add(p.spanish);
    add("--");
  }
  return h;
}

}  // namespace

TEST_CASE("translation corpus: the running example", "[data][translation]") {
  REQUIRE(translate_sentence("we are eating bread") == "estamos comiendo pan");
  const TranslationCorpus corpus = generate_translation_corpus(small_translation_corpus(0));
  REQUIRE(corpus.train[0].english == "we are eating bread");
  REQUIRE(corpus.train[0].spanish == "estamos comiendo pan");
}

TEST_CASE("translation corpus: deterministic for a seed", "[data][translation]") {
  const TranslationCorpus a = generate_translation_corpus(small_translation_corpus(1));
  const TranslationCorpus b = generate_translation_corpus(small_translation_corpus(1));
  const TranslationCorpus c = generate_translation_corpus(small_translation_corpus(2));
  auto english = [](const std::vector<TranslationPair>& pairs) {
    std::vector<std::string> out;
    for (const auto& p : pairs) out.push_back(p.english + " => " + p.spanish);
    return out;
  };
  REQUIRE(english(a.train) == english(b.train));
  REQUIRE(english(a.valid) == english(b.valid));
  REQUIRE(english(a.test) == english(b.test));
  REQUIRE(english(a.train) != english(c.train));
  REQUIRE(english(a.test) != english(c.test));
}

TEST_CASE("translation corpus: the presets' corpora are exactly as they were", "[data][translation]") {
  // Checkpoints and the benchmark numbers depend on these; a change to the grammar or to the
  // sampling that moves them is a change of the corpus, to be made on purpose.
  const TranslationCorpus full = generate_translation_corpus();  // the "default" preset's sizes
  REQUIRE(full.train.size() == 20000);
  CHECK(full.train.back().english == "the woman watches tea");
  CHECK(full.test.back().english == "the woman is watching a computer");
  CHECK(corpus_hash(full) == 15081479531964985034ull);
  TranslationCorpusOptions tiny;  // the "tiny" preset's sizes
  tiny.train_size = 2000, tiny.valid_size = 100, tiny.test_size = 100;
  CHECK(corpus_hash(generate_translation_corpus(tiny)) == 17463202043605960247ull);
  CHECK(corpus_hash(generate_translation_corpus(small_translation_corpus(3))) ==
        16760787712469355138ull);
}
