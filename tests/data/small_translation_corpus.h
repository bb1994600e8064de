#pragma once
// The translation tests' corpus: the toy English -> Spanish corpus at 3000 / 300 / 300 pairs, big
// enough for every split and quick to generate.
#include <cstdint>

#include "data/translation/translation_corpus.h"

namespace uwaga::testing {

inline TranslationCorpusOptions small_translation_corpus(std::uint64_t seed) {
  TranslationCorpusOptions options;
  options.seed = seed;
  options.train_size = 3000;
  options.valid_size = 300;
  options.test_size = 300;
  return options;
}

}  // namespace uwaga::testing
