#include "data/translation/translation_split.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "data/translation/vocabulary.h"

namespace uwaga::translation {

TripleSplit split_triples(const TranslationCorpusOptions& options, const Triple& always_train,
                          Generator& gen) {
  if (options.valid_fraction < 0 || options.test_fraction < 0 ||
      options.valid_fraction + options.test_fraction >= 1)
    fail("translation corpus: valid_fraction ", options.valid_fraction, " and test_fraction ",
         options.test_fraction, " must be >= 0 and leave some triples for training");
  // Shuffle the triples (Fisher–Yates) and deal them out: test, valid, train.
  std::vector<Triple> triples = all_triples();
  for (std::size_t i = triples.size() - 1; i > 0; --i)
    std::swap(triples[i], triples[gen.below(i + 1)]);
  const auto total = static_cast<double>(triples.size());
  const auto n_test = static_cast<std::size_t>(std::llround(options.test_fraction * total));
  const auto n_valid = static_cast<std::size_t>(std::llround(options.valid_fraction * total));
  if (n_test + n_valid >= triples.size())
    fail("translation corpus: valid_fraction ", options.valid_fraction, " and test_fraction ",
         options.test_fraction, " leave no triples for training");
  TripleSplit split;
  for (std::size_t i = 0; i < triples.size(); ++i)
    (i < n_test ? split.test : i < n_test + n_valid ? split.valid : split.train)
        .push_back(triples[i]);

  // A held-out triple goes back to training when training has no triple with its subject, its
  // noun or its (person, verb) pair: otherwise some of its words could never be learned ("bailas"
  // only ever comes from "you dance").
  std::set<int> subjects, nouns;
  std::set<std::pair<int, int>> person_verbs;
  auto cover = [&](const Triple& t) {
    subjects.insert(t.subject);
    nouns.insert(t.noun);
    person_verbs.insert({kSubjects[t.subject].person, t.verb});
  };
  for (const Triple& t : split.train) cover(t);
  for (std::vector<Triple>* held_out : {&split.test, &split.valid}) {
    std::vector<Triple> kept;
    for (const Triple& t : *held_out) {
      const bool always = t.subject == always_train.subject && t.verb == always_train.verb &&
                          t.noun == always_train.noun;
      if (always || !subjects.count(t.subject) || !nouns.count(t.noun) ||
          !person_verbs.count({kSubjects[t.subject].person, t.verb})) {
        split.train.push_back(t);
        cover(t);
      } else {
        kept.push_back(t);
      }
    }
    *held_out = std::move(kept);
  }
  return split;
}

void check_split_sizes(const TripleSplit& triples, const TranslationCorpusOptions& options) {
  // Sizes the grammar cannot meet fail here, at once, rather than after minutes of sampling.
  struct Split {
    const char* name;
    std::int64_t size;
    const std::vector<Triple>* triples;
    const char* fraction_name;  // the option that gives the split its triples; none for train
    double fraction;
  };
  for (const Split& split : {Split{"train", options.train_size, &triples.train, nullptr, 0},
                             Split{"valid", options.valid_size, &triples.valid, "valid_fraction",
                                   options.valid_fraction},
                             Split{"test", options.test_size, &triples.test, "test_fraction",
                                   options.test_fraction}}) {
    if (split.size < 0)
      fail("translation corpus: ", split.name, "_size ", split.size, " must be >= 0");
    const std::int64_t most = sentence_count(*split.triples);
    if (split.size > most) {
      // Exact for training; held-out sentences may also use only training words, so fewer
      // than `most` may be reachable there.
      std::ostringstream why;
      why << "the " << split.triples->size() << " " << split.name
          << " subject-verb-object triples";
      if (split.fraction_name) why << " (" << split.fraction_name << " " << split.fraction << ")";
      why << " make at most " << most << " distinct sentences; ask for fewer";
      if (split.fraction_name) why << " or raise " << split.fraction_name;
      fail("translation corpus: ", split.name, "_size ", split.size, " cannot be met: ", why.str());
    }
  }
}

KnownWords known_words(const std::vector<TranslationPair>& pairs) {
  KnownWords known;
  for (const TranslationPair& p : pairs) {
    for (std::string& w : tokenize(p.english)) known.english.insert(std::move(w));
    for (std::string& w : tokenize(p.spanish)) known.spanish.insert(std::move(w));
  }
  return known;
}

namespace {

bool all_known(const Words& words, const std::unordered_set<std::string>& known) {
  return std::all_of(words.begin(), words.end(),
                     [&](const std::string& w) { return known.count(w) != 0; });
}

}  // namespace

std::vector<TranslationPair> sample_split(const std::vector<Triple>& triples, std::int64_t size,
                                          std::uint64_t seed, const char* split,
                                          std::int64_t train_size, const Sentence* first,
                                          const KnownWords* known) {
  std::vector<TranslationPair> pairs;
  if (size <= 0) return pairs;
  if (triples.empty())
    fail("translation corpus: the ", split, " split has no subject-verb-object triples; "
         "raise its fraction of the triples");
  std::unordered_set<std::string> seen;
  std::int64_t unknown = 0, repeated = 0;  // draws skipped, and why
  auto add = [&](const Sentence& s) {
    const Words english = english_words(s), spanish = spanish_words(s);
    if (known && !(all_known(english, known->english) && all_known(spanish, known->spanish))) {
      ++unknown;
      return;
    }
    if (!seen.insert(join(english)).second) {
      ++repeated;
      return;
    }
    pairs.push_back({join(english), join(spanish)});
  };
  if (first) add(*first);
  Generator gen(seed);
  const std::int64_t max_attempts = 100 * size + 1000;
  for (std::int64_t attempt = 0;
       static_cast<std::int64_t>(pairs.size()) < size && attempt < max_attempts; ++attempt)
    add(sample_sentence(triples[gen.below(triples.size())], gen));
  if (static_cast<std::int64_t>(pairs.size()) < size) {
    const auto found = static_cast<std::int64_t>(pairs.size());
    // Mostly words never seen in training: the training split is what is too small.
    if (unknown > repeated)
      fail("translation corpus: train_size ", train_size, " is too small for ", split, "_size ",
           size, ": held-out sentences may use only words of the training sentences, and ",
           unknown, " of the ", unknown + repeated + found, " ", split,
           " sentences drawn used other words (", found, " distinct ones found); raise train_size "
           "or lower ", split, "_size");
    fail("translation corpus: ", split, "_size ", size, " is too large: could make only ", found,
         " distinct ", split, " sentences from ", triples.size(), " triples in ",
         unknown + repeated + found, " draws; lower ", split, "_size",
         std::string(split) == "train" ? "" : " or raise " + std::string(split) + "_fraction");
  }
  return pairs;
}

}  // namespace uwaga::translation
