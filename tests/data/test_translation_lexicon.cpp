// The word table of the toy corpus: each entry has the forms the grammar spells, and every verb
// that takes an object has nouns to take.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "data/translation/translation_grammar.h"
#include "data/translation/translation_lexicon.h"

using namespace uwaga::translation;

TEST_CASE("translation lexicon: nouns have their plurals, mass nouns none", "[data][translation]") {
  std::set<std::string> english;
  for (const Noun& n : kNouns) {
    INFO(n.en);
    REQUIRE(english.insert(n.en).second);  // parsing needs each English word once
    REQUIRE(std::string(n.en_pl).empty() == n.mass);
    REQUIRE(std::string(n.es_pl).empty() == n.mass);
    REQUIRE(n.adjectives != 0);
  }
}

TEST_CASE("translation lexicon: every verb is -ar, -er or -ir and finds its objects",
          "[data][translation]") {
  for (const Verb& v : kVerbs) {
    INFO(v.en);
    const std::string infinitive = v.es;
    const std::string ending = infinitive.substr(infinitive.size() - 2);
    REQUIRE((ending == "ar" || ending == "er" || ending == "ir"));
    if (v.objects == 0) continue;
    int nouns = 0;
    for (int n = 0; n < static_cast<int>(kNouns.size()); ++n) nouns += takes_object(v, n);
    REQUIRE(nouns > 0);
  }
  // The grammar refers to entries by index (data/translation/translation_grammar.h's example).
  REQUIRE(triple_key({4, 0, 30}) == "we|eat|bread");
}
