#pragma once
// The generalisation split of the toy corpus (data/translation/translation_corpus.h). Every sentence has a
// subject-verb-object triple (we, eat, bread); the triples, not the sentences, are dealt out to
// test, valid and train, so no held-out sentence has a triple seen in training and exact-match
// accuracy on the test split measures translating new combinations of known words. "Known" is
// enforced twice: a triple is held out only if training keeps its subject, its noun and its verb
// in the same person (split_triples), and held-out sentences use only words of the training
// sentences (sample_split with KnownWords).
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/random.h"
#include "data/translation/translation_corpus.h"
#include "data/translation/translation_grammar.h"

namespace uwaga::translation {

struct TripleSplit {
  std::vector<Triple> train, valid, test;
};

// Shuffles all_triples() with `gen` (Fisher–Yates) and deals them out: options.test_fraction of
// them to test, options.valid_fraction to valid, the rest to train. A held-out triple goes back to
// training when training has no triple with its subject, its noun or its (person, verb) pair, and
// so does `always_train`. Fails when the fractions leave no triples for training.
TripleSplit split_triples(const TranslationCorpusOptions& options, const Triple& always_train,
                          Generator& gen);

// Fails, naming the option to change, when a split's size (options.train_size, ...) is negative
// or above the number of distinct sentences its triples make.
void check_split_sizes(const TripleSplit& triples, const TranslationCorpusOptions& options);

// The words of the training sentences, one set per language.
struct KnownWords {
  std::unordered_set<std::string> english;
  std::unordered_set<std::string> spanish;
};

// Every word of `pairs`, English and Spanish.
KnownWords known_words(const std::vector<TranslationPair>& pairs);

// `size` distinct pairs made from `triples`, drawn with a Generator seeded with `seed`, starting
// with `first` when given. With `known`, sentences holding a word outside it are skipped:
// evaluation should measure generalisation to new combinations, not guessing words never seen in
// training. `split` names the split ("valid") and `train_size` the number of training sentences,
// for the messages.
std::vector<TranslationPair> sample_split(const std::vector<Triple>& triples, std::int64_t size,
                                          std::uint64_t seed, const char* split,
                                          std::int64_t train_size, const Sentence* first,
                                          const KnownWords* known);

}  // namespace uwaga::translation
