#include "data/translation/translation_parser.h"

#include <algorithm>

#include "core/error.h"
#include "data/translation/vocabulary.h"

namespace uwaga::translation {
namespace {

// Whether `words` come next in `tokens`, from position `at` on.
bool matches(const Words& tokens, std::size_t at, const Words& words) {
  if (at + words.size() > tokens.size()) return false;
  return std::equal(words.begin(), words.end(), tokens.begin() + static_cast<std::ptrdiff_t>(at));
}

// Tries every way the grammar could have produced `tokens` (a small search: each part narrows the
// next) and stores the first complete parse in `out`; false when there is none.
bool find_parse(const Words& tokens, Sentence& out) {
  for (int subj = 0; subj < static_cast<int>(kSubjects.size()); ++subj) {
    Words subject_words;
    append(subject_words, kSubjects[subj].en);
    if (!matches(tokens, 0, subject_words)) continue;
    for (int v = 0; v < static_cast<int>(kVerbs.size()); ++v)
      for (int progressive = 0; progressive < 2; ++progressive)
        for (int negated = 0; negated < 2; ++negated) {
          if (progressive && !kVerbs[v].progressive) continue;
          Sentence s;
          s.subject = subj;
          s.verb = v;
          s.progressive = progressive;
          s.negated = negated;
          const Words verb_words = english_verb(s);
          if (!matches(tokens, subject_words.size(), verb_words)) continue;
          const std::size_t after_verb = subject_words.size() + verb_words.size();
          std::vector<NounPhrase> objects;
          if (takes_object(kVerbs[v], -1)) objects.push_back({});
          for (int n = 0; n < static_cast<int>(kNouns.size()); ++n)
            if (takes_object(kVerbs[v], n))
              for (const NounPhrase& np : noun_phrases(n)) objects.push_back(np);
          for (const NounPhrase& np : objects) {
            std::size_t at = after_verb;
            if (np.noun >= 0) {
              const Words object_words = english_noun_phrase(np);
              if (!matches(tokens, at, object_words)) continue;
              at += object_words.size();
            }
            s.object = np;
            s.phrase = -1;
            if (at == tokens.size()) {
              out = s;
              return true;
            }
            for (int p = 0; p < static_cast<int>(kPhrases.size()); ++p) {
              Words phrase_words;
              append(phrase_words, kPhrases[p].en);
              if (phrase_allowed(s, p) && matches(tokens, at, phrase_words) &&
                  at + phrase_words.size() == tokens.size()) {
                s.phrase = p;
                out = s;
                return true;
              }
            }
          }
        }
  }
  return false;
}

}  // namespace

Sentence parse_sentence(const std::string& english) {
  Sentence s;
  if (!find_parse(tokenize(english), s))
    fail("translation corpus: '", english, "' is not a sentence of the grammar");
  return s;
}

NounPhrase parse_noun_phrase(const std::string& english) {
  const Words tokens = tokenize(english);
  for (int n = 0; n < static_cast<int>(kNouns.size()); ++n)
    for (const NounPhrase& np : noun_phrases(n))
      if (english_noun_phrase(np) == tokens) return np;
  fail("translation corpus: '", english, "' is not a noun phrase of the grammar");
}

}  // namespace uwaga::translation
