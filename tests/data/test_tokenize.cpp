// The tokenizer on what users type or paste: Spanish and typographic punctuation, no-break
// spaces, a byte-order mark, CRLF line ends.
#include <catch2/catch.hpp>

#include "data/translation/vocabulary.h"

using namespace uwaga;
using Words = std::vector<std::string>;

namespace {
// Written as bytes: a hex escape would swallow a following letter a-f ("\xA0" "eat").
const std::string kNoBreakSpace = "\xC2\xA0", kZeroWidthSpace = "\xE2\x80\x8B";
const std::string kOpenQuote = "\xE2\x80\x9C", kCloseQuote = "\xE2\x80\x9D";
const std::string kOpenSingle = "\xE2\x80\x98", kApostrophe = "\xE2\x80\x99";
const std::string kEnDash = "\xE2\x80\x93", kEmDash = "\xE2\x80\x94";
const std::string kByteOrderMark = "\xEF\xBB\xBF";
}  // namespace

TEST_CASE("tokenize: non-ASCII punctuation and spaces separate words",
          "[data][translation]") {
  // Before, "¿we" and "bread”" were single (unknown) words, and so was a no-break space's
  // "we eat".
  REQUIRE(tokenize("¿we eat bread?") == Words{"we", "eat", "bread"});
  REQUIRE(tokenize("¡they are reading the books!") ==
          Words{"they", "are", "reading", "the", "books"});
  REQUIRE(tokenize(kOpenQuote + "we eat bread" + kCloseQuote) == Words{"we", "eat", "bread"});
  REQUIRE(tokenize("«we eat bread»…") == Words{"we", "eat", "bread"});
  REQUIRE(tokenize("we" + kNoBreakSpace + "eat" + kZeroWidthSpace + "bread") ==
          Words{"we", "eat", "bread"});
  REQUIRE(tokenize("bread " + kEnDash + " milk" + kEmDash + "fish") ==
          Words{"bread", "milk", "fish"});
  // The typographic apostrophe splits as the ASCII one does.
  REQUIRE(tokenize("don" + kApostrophe + "t") == tokenize("don't"));
  REQUIRE(tokenize(kOpenSingle + "tea" + kApostrophe) == Words{"tea"});
  // A UTF-8 byte-order mark (a file saved by some editors) is not part of the first word.
  REQUIRE(tokenize(kByteOrderMark + "we eat bread\r\n") == Words{"we", "eat", "bread"});
  // ASCII control characters separate too ("eat\x01" was a word).
  REQUIRE(tokenize("we eat\x01" "bread\x1B[0m") == Words{"we", "eat", "bread", "0m"});
}

TEST_CASE("tokenize: Spanish letters and other UTF-8 stay inside words", "[data][translation]") {
  // Unchanged: accented letters, ñ and ü are letters, not separators (only ASCII is lowercased).
  REQUIRE(tokenize("¿El niño come pingüino?") == Words{"el", "niño", "come", "pingüino"});
  REQUIRE(tokenize("Él está aquí") == Words{"Él", "está", "aquí"});
  // Bytes that are not UTF-8 are kept as they are, not dropped and not crashing.
  REQUIRE(tokenize("we \xFF\xFE eat") == Words{"we", "\xFF\xFE", "eat"});
  // A truncated separator (the first byte of "¿" alone) is a byte like any other.
  REQUIRE(tokenize("pan\xC2") == Words{"pan\xC2"});
}

TEST_CASE("tokenize: lowercase words, punctuation dropped, UTF-8 kept", "[data][translation]") {
  REQUIRE(tokenize("We are eating bread.") == Words{"we", "are", "eating", "bread"});
  REQUIRE(tokenize("  él   come\tpan\n") == Words{"él", "come", "pan"});
  REQUIRE(tokenize("").empty());
}
