// The toy corpus's grammar: conjugation, pronouns, negation, agreement, and how many sentences
// one subject-verb-object triple makes.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "data/translation/translation_corpus.h"
#include "data/translation/translation_grammar.h"

using namespace uwaga;
using Catch::Contains;

TEST_CASE("translation grammar: conjugation, pronouns and negation", "[data][translation]") {
  // yo, tú and nosotros are dropped; él, ella, ellos and ustedes are kept.
  CHECK(translate_sentence("i eat") == "como");
  CHECK(translate_sentence("you eat bread") == "comes pan");
  CHECK(translate_sentence("he eats bread") == "él come pan");
  CHECK(translate_sentence("she drinks the milk") == "ella bebe la leche");
  CHECK(translate_sentence("they are drinking coffee") == "ellos están bebiendo café");
  CHECK(translate_sentence("you all are reading a book") == "ustedes están leyendo un libro");
  CHECK(translate_sentence("i am writing a letter") == "estoy escribiendo una carta");
  // Negation: "no" right before the verb.
  CHECK(translate_sentence("we are not eating bread") == "no estamos comiendo pan");
  CHECK(translate_sentence("he does not eat the bread") == "él no come el pan");
  CHECK(translate_sentence("i do not have a car") == "no tengo un coche");
  // Irregular verbs.
  CHECK(translate_sentence("i have an old car") == "tengo un coche viejo");
  CHECK(translate_sentence("she closes the doors") == "ella cierra las puertas");
  CHECK(translate_sentence("i bring the keys") == "traigo las llaves");
  CHECK(translate_sentence("the children are sleeping") == "los niños están durmiendo");
  CHECK(translate_sentence("we make a cake") == "hacemos una tarta");
  CHECK(translate_sentence("you want some apples") == "quieres unas manzanas");
  CHECK(translate_sentence("i see the house") == "veo la casa");
  // Phrases, with tense restrictions.
  CHECK(translate_sentence("my mother is cooking the fish in the kitchen") ==
        "mi madre está cocinando el pescado en la cocina");
  CHECK(translate_sentence("my friends swim every day") == "mis amigos nadan todos los días");
  CHECK(translate_sentence("i am looking for the keys now") == "estoy buscando las llaves ahora");
}

TEST_CASE("translation grammar: articles and adjectives agree with the noun", "[data][translation]") {
  CHECK(translate_noun_phrase("the red car") == "el coche rojo");
  CHECK(translate_noun_phrase("the red houses") == "las casas rojas");
  CHECK(translate_noun_phrase("a red house") == "una casa roja");
  CHECK(translate_noun_phrase("some red cars") == "unos coches rojos");
  CHECK(translate_noun_phrase("some small boxes") == "unas cajas pequeñas");
  CHECK(translate_noun_phrase("an old book") == "un libro viejo");
  CHECK(translate_noun_phrase("the big houses") == "las casas grandes");
  CHECK(translate_noun_phrase("blue cars") == "coches azules");
  CHECK(translate_noun_phrase("cold milk") == "leche fría");
  CHECK(translate_noun_phrase("the hot soup") == "la sopa caliente");
  CHECK(translate_noun_phrase("an apple") == "una manzana");
  REQUIRE_THROWS_WITH(translate_noun_phrase("a bread"), Contains("not a noun phrase"));
  REQUIRE_THROWS_WITH(translate_noun_phrase("a apple"), Contains("not a noun phrase"));
}

TEST_CASE("translation grammar: sentence_count is the number of sentences a triple makes",
          "[data][translation]") {
  // The split's size checks rely on it being exact: draw many sentences around a few triples and
  // count the distinct ones.
  using namespace translation;
  auto index = [](const auto& table, const std::string& en) {
    for (std::size_t i = 0; i < table.size(); ++i)
      if (table[i].en == en) return static_cast<int>(i);
    FAIL("no '" << en << "' in the table");
    return -1;
  };
  const Triple we_eat_bread{index(kSubjects, "we"), index(kVerbs, "eat"), index(kNouns, "bread")};
  const Triple they_sleep{index(kSubjects, "they"), index(kVerbs, "sleep"), -1};
  // Stative (no progressive), and "with my mother" is not a phrase for this subject.
  const Triple mother_has_milk{index(kSubjects, "my mother"), index(kVerbs, "have"),
                               index(kNouns, "milk")};
  Generator gen(0);
  for (const Triple& t : {we_eat_bread, they_sleep, mother_has_milk}) {
    INFO(triple_key(t));
    std::set<std::string> english;
    for (int draw = 0; draw < 100000; ++draw)
      english.insert(join(english_words(sample_sentence(t, gen))));
    REQUIRE(static_cast<std::int64_t>(english.size()) == sentence_count(t));
  }
  REQUIRE(sentence_count(we_eat_bread) == 440);  // 2 tenses × 2 × 10 noun phrases × 11 phrases
}
