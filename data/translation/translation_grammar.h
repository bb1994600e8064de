#pragma once
// The sentences of the toy corpus's grammar (data/translation/translation_corpus.h describes it):
//   SUBJECT [not] VERB [OBJECT] [PHRASE]
// A Sentence is the choices that make one: entries of the word table (data/translation/translation_lexicon.h)
// by index, the tense, the negation. english_words and spanish_words spell it in each language.
// A subject-verb-object Triple is a sentence's skeleton: sample_sentence draws the rest at random,
// sentence_count says how many different sentences it can make.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/random.h"
#include "data/translation/translation_lexicon.h"

namespace uwaga::translation {

enum class Article { kNone, kDefinite, kIndefinite };

// The object of a sentence; noun and adjective index kNouns and kAdjectives.
struct NounPhrase {
  int noun = -1;  // -1: no object
  Article article = Article::kNone;
  bool plural = false;
  int adjective = -1;  // -1: none
};

// subject, verb and phrase index kSubjects, kVerbs and kPhrases.
struct Sentence {
  int subject = 0;
  int verb = 0;
  bool progressive = false;
  bool negated = false;
  NounPhrase object;
  int phrase = -1;  // -1: none
};

using Words = std::vector<std::string>;

// The words of `text` (tokenized) appended to `out`.
void append(Words& out, const std::string& text);
// The words separated by single spaces.
std::string join(const Words& words);

// ---- noun phrases ----------------------------------------------------------------------------

// The article/number combinations a noun allows: mass nouns are singular, with "the" or none;
// countable nouns need an article in the singular and may drop it in the plural.
std::vector<std::pair<Article, bool>> article_forms(const Noun& noun);
// The adjectives that suit `noun`, as indices into kAdjectives.
std::vector<int> adjectives_for(const Noun& noun);
// Every noun phrase of noun `n`: each article and number it allows, with each adjective or none.
std::vector<NounPhrase> noun_phrases(int n);

// English: article, adjective, noun — "an old car", "some red houses", "bread".
Words english_noun_phrase(const NounPhrase& np);
// Spanish: article, noun, adjective, all agreeing — "un coche viejo", "unas casas rojas", "pan".
Words spanish_noun_phrase(const NounPhrase& np);

// ---- sentences -------------------------------------------------------------------------------

// The English verb after the subject: "eats", "does not eat", "am eating", "are not eating".
Words english_verb(const Sentence& s);
Words english_words(const Sentence& s);  // "we are not eating bread"
Words spanish_words(const Sentence& s);  // "no estamos comiendo pan"

// Whether `verb` takes noun `noun` (an index into kNouns) as its object; noun -1: whether it can
// go without one.
bool takes_object(const Verb& verb, int noun);
// A phrase must suit the tense ("now" only with the progressive) and not repeat the subject
// ("my mother eats with my mother").
bool phrase_allowed(const Sentence& s, int p);

// ---- subject-verb-object triples -------------------------------------------------------------

// Indices into kSubjects, kVerbs and kNouns: (4, 0, 30) is "we", "eat", "bread".
struct Triple {
  int subject;
  int verb;
  int noun;  // -1: no object
};

// Every triple the grammar allows: each subject with each verb and each noun the verb takes.
std::vector<Triple> all_triples();
// The triple of a sentence: "we are not eating the red apples" -> (we, eat, apple).
Triple triple_of(const Sentence& s);
// "we|eat|bread", "they|sleep|-": the English base forms.
std::string triple_key(const Triple& t);

// A sentence around a triple with the rest drawn at random: tense, negation, article, number,
// adjective and phrase.
Sentence sample_sentence(const Triple& t, Generator& gen);
// How many distinct sentences sample_sentence can make around `t`: each of its choices (tense,
// negation, article and number, adjective or none, phrase or none) spells a different English
// sentence, so this is exact; it is an upper bound in any case, since every sentence comes from
// one of these choices.
std::int64_t sentence_count(const Triple& t);
std::int64_t sentence_count(const std::vector<Triple>& triples);

}  // namespace uwaga::translation
