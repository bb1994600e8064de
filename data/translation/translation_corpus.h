#pragma once
// A toy English -> Spanish parallel corpus, generated from a small grammar (a few hundred words),
// for training and inspecting a seq2seq transformer. The running example of the lecture notes,
//   "we are eating bread" -> "estamos comiendo pan",
// is one of its sentences (and is always in the training split).
//
// The grammar:  SUBJECT [not] VERB [OBJECT] [PHRASE]
//   SUBJECT  pronouns (i, you, he, she, we, they, you all) or nouns (the boy, my mother, ...)
//   VERB     simple present ("we eat", "he eats", "we do not eat") or present progressive
//            ("we are eating", "we are not eating"); regular -ar/-er/-ir verbs and common
//            irregular ones (tener, hacer, querer, ver, traer, dormir, cerrar, ...). Stative verbs
//            (have, want, need, see) take only the simple present, as in English.
//   OBJECT   a thing, food or drink the verb suits ("read the newspaper", not "drink the car"):
//            [the | a/an | some] [ADJECTIVE] NOUN in English, [el/la/los/las | un/una/unos/unas]
//            NOUN [ADJECTIVE] in Spanish, article and adjective agreeing with the noun's gender and
//            number: "the red car" -> "el coche rojo", "the red houses" -> "las casas rojas".
//            Mass nouns and plurals may go without an article: "bread" -> "pan".
//   PHRASE   a place, company or time: "in the kitchen" -> "en la cocina", "with my friends" ->
//            "con mis amigos", "every day" -> "todos los días" (simple present only), "now" ->
//            "ahora" (progressive only).
// Subject pronouns in Spanish: yo, tú and nosotros are dropped, because the verb ending already
// says who acts ("como", "comes", "comemos"); él, ella, ellos and ustedes are kept, because the
// third-person forms are shared ("come" could be he, she or it). Negation puts "no" right before
// the verb: "no estamos comiendo pan", "él no come pan".
// Text is lowercase (so "I" is "i"), words separated by single spaces, no punctuation; Spanish
// keeps its accents (UTF-8), which also tell "él" (he) from "el" (the).
//
// The split tests generalisation: every sentence has a subject-verb-object triple (we, eat,
// bread), and valid and test sentences use triples that never occur in training, so exact-match
// accuracy on the test set measures translating new combinations of known words. "Known" is
// enforced: a triple is held out only if training keeps its subject, its noun and its verb in the
// same person, and valid/test sentences use only words that occur in the training sentences.
//
// This header is the entry point; the corpus is made in four parts, a file each:
//   data/translation/translation_lexicon   the word table: subjects, nouns, adjectives, verbs, phrases
//   data/translation/translation_grammar   sentences: their parts, spelled in English and Spanish; sampling
//   data/translation/translation_parser    English back into a sentence of the grammar
//   data/translation/translation_split     the held-out triples, and each split's sentences drawn from them
#include <cstdint>
#include <string>
#include <vector>

#include "data/translation/vocabulary.h"

namespace uwaga {

struct TranslationPair {
  std::string english;
  std::string spanish;
};

struct TranslationCorpusOptions {
  std::uint64_t seed = 0;
  std::int64_t train_size = 20000;  // distinct sentence pairs per split
  std::int64_t valid_size = 1000;
  std::int64_t test_size = 1000;
  double valid_fraction = 0.1;  // share of the subject-verb-object triples held out for valid
  double test_fraction = 0.1;   // ... and for test

  // The JSON fields, in a run configuration (core/json_fields.h).
  template <class Field>
  static void fields(Field&& field) {
    field("seed", &TranslationCorpusOptions::seed);
    field("train_size", &TranslationCorpusOptions::train_size);
    field("valid_size", &TranslationCorpusOptions::valid_size);
    field("test_size", &TranslationCorpusOptions::test_size);
    field("valid_fraction", &TranslationCorpusOptions::valid_fraction);
    field("test_fraction", &TranslationCorpusOptions::test_fraction);
  }
};

struct TranslationCorpus {
  std::vector<TranslationPair> train;  // train[0] is the running example
  std::vector<TranslationPair> valid;
  std::vector<TranslationPair> test;
};

// The same options always give the same corpus.
TranslationCorpus generate_translation_corpus(const TranslationCorpusOptions& options = {});

// The Spanish of an English sentence of the grammar, e.g. "we are eating bread" ->
// "estamos comiendo pan". Throws uwaga::Error for a sentence outside the grammar.
std::string translate_sentence(const std::string& english);

// The Spanish of an English object noun phrase, e.g. "the red houses" -> "las casas rojas".
std::string translate_noun_phrase(const std::string& english);

// The subject-verb-object triple of an English sentence of the grammar, as "subject|verb|object"
// in English base forms: "we are not eating the red apples" -> "we|eat|apple"; "-" for no object.
std::string sentence_triple(const std::string& english);

// How many distinct subject-verb-object triples the grammar has.
std::int64_t translation_triple_count();

}  // namespace uwaga
