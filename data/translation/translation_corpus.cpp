#include "data/translation/translation_corpus.h"

#include "data/translation/translation_grammar.h"
#include "data/translation/translation_parser.h"
#include "data/translation/translation_split.h"

namespace uwaga {

TranslationCorpus generate_translation_corpus(const TranslationCorpusOptions& options) {
  using namespace translation;
  // The lecture notes' running example, found by parsing so it cannot drift from the tables. It
  // opens the training split, and its triple always trains, so the demo sentence is one the model
  // has seen.
  const Sentence example = parse_sentence("we are eating bread");
  Generator gen(options.seed);
  const TripleSplit triples = split_triples(options, triple_of(example), gen);
  check_split_sizes(triples, options);

  // Each split samples from its own generator stream, drawn from the main one.
  TranslationCorpus corpus;
  corpus.train = sample_split(triples.train, options.train_size, gen.next_u64(), "train",
                              options.train_size, &example, nullptr);
  const KnownWords known = known_words(corpus.train);
  corpus.valid = sample_split(triples.valid, options.valid_size, gen.next_u64(), "valid",
                              options.train_size, nullptr, &known);
  corpus.test = sample_split(triples.test, options.test_size, gen.next_u64(), "test",
                             options.train_size, nullptr, &known);
  return corpus;
}

std::string translate_sentence(const std::string& english) {
  using namespace translation;
  return join(spanish_words(parse_sentence(english)));
}

std::string translate_noun_phrase(const std::string& english) {
  using namespace translation;
  return join(spanish_noun_phrase(parse_noun_phrase(english)));
}

std::string sentence_triple(const std::string& english) {
  using namespace translation;
  return triple_key(triple_of(parse_sentence(english)));
}

std::int64_t translation_triple_count() {
  return static_cast<std::int64_t>(translation::all_triples().size());
}

}  // namespace uwaga
