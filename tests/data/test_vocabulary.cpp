// The vocabulary of the translator: special ids, encode/decode, JSON, on the toy corpus.
#include <catch2/catch.hpp>

#include "data/translation/translation_corpus.h"
#include "core/error.h"
#include "data/translation/vocabulary.h"

using namespace uwaga;
using Catch::Contains;

TEST_CASE("vocabulary: special ids, encode/decode round trip, JSON", "[data][translation]") {
  const TranslationCorpus corpus = generate_translation_corpus();  // the default, full size
  std::vector<std::string> english, spanish;
  for (const auto& p : corpus.train) {
    english.push_back(p.english);
    spanish.push_back(p.spanish);
  }
  const Vocabulary source = Vocabulary::build(english);
  const Vocabulary target = Vocabulary::build(spanish);
  REQUIRE(source.word(Vocabulary::kPad) == "<pad>");
  REQUIRE(source.word(Vocabulary::kBos) == "<bos>");
  REQUIRE(source.word(Vocabulary::kEos) == "<eos>");
  REQUIRE(source.word(Vocabulary::kUnk) == "<unk>");
  REQUIRE(source.id("zebra") == Vocabulary::kUnk);
  // "A few hundred words".
  REQUIRE(source.size() > 150);
  REQUIRE(target.size() > 200);
  REQUIRE(target.size() < 1000);

  const std::vector<std::int64_t> ids = target.encode("estamos comiendo pan", true);
  REQUIRE(ids.size() == 5);
  REQUIRE(ids.front() == Vocabulary::kBos);
  REQUIRE(ids.back() == Vocabulary::kEos);
  REQUIRE(target.decode(ids) == "estamos comiendo pan");
  // Decoding stops at EOS and skips padding.
  REQUIRE(target.decode({Vocabulary::kBos, ids[1], Vocabulary::kEos, ids[2], Vocabulary::kPad}) ==
          "estamos");
  REQUIRE(target.decode({ids[1], Vocabulary::kUnk, 99999}) == "estamos <unk> <unk>");

  // Every word of the held-out sentences was seen in training, so nothing encodes to UNK.
  for (const auto* split : {&corpus.valid, &corpus.test})
    for (const auto& p : *split) {
      INFO(p.english << " => " << p.spanish);
      REQUIRE(source.decode(source.encode(p.english)) == p.english);
      REQUIRE(target.decode(target.encode(p.spanish, true)) == p.spanish);
    }

  const Vocabulary restored = Vocabulary::from_json(target.to_json());
  REQUIRE(restored == target);
  REQUIRE(restored.id("comiendo") == target.id("comiendo"));
  REQUIRE_THROWS_WITH(Vocabulary::from_json("{\"tokens\": [\"<pad>\", \"<bos>\", \"x\", \"y\"]}"),
                      Contains("token 2 is 'x'; expected '<eos>'"));
  REQUIRE_THROWS_WITH(Vocabulary::from_json("not json"), Contains("not valid JSON"));
}

// Found by tests/fuzz (fuzz_vocabulary): a word of bytes that are not UTF-8 made to_json throw
// nlohmann's type_error, which nothing catches as a uwaga error.
TEST_CASE("vocabulary: a word that is not UTF-8 cannot be saved, and says so",
          "[data][translation]") {
  const Vocabulary vocab = Vocabulary::build({"we ea\x86\xdf bread"});
  CHECK_THROWS_AS(vocab.to_json(), uwaga::Error);
  CHECK_THROWS_WITH(vocab.to_json(), Catch::Contains("a word is not valid UTF-8"));
}
