// GPT-2's pre-tokenizer, written as a scanner: the pieces its regular expression gives, on the
// cases each alternative exists for (the node reference test in test_bpe_tokenizer.cpp checks
// the whole chain on hundreds of strings more).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "data/text/pretokenizer.h"
#include "data/text/unicode_classes.h"

using namespace uwaga;

namespace {
std::vector<std::string> pieces(const std::string& text) {
  std::vector<std::string> out;
  for (auto p : pretokenize(text)) out.emplace_back(p);
  return out;
}
using V = std::vector<std::string>;
}  // namespace

TEST_CASE("pretokenizer: GPT-2's pattern, alternative by alternative", "[data][bpe]") {
  CHECK(pieces("") == V{});
  CHECK(pieces("Hello world") == V{"Hello", " world"});
  CHECK(pieces("it's we'll I'd they're") == V{"it", "'s", " we", "'ll", " I", "'d", " they", "'re"});
  CHECK(pieces("IT'S") == V{"IT", "'", "S"});  // the contractions are lower case only
  CHECK(pieces("'sam") == V{"'s", "am"});      // GPT-2's quirk, kept
  CHECK(pieces("abc123 456") == V{"abc", "123", " 456"});
  CHECK(pieces("x = (a+b);") == V{"x", " =", " (", "a", "+", "b", ");"});
  CHECK(pieces("a   b") == V{"a", "  ", " b"});  // a run of spaces leaves one to the word after
  CHECK(pieces("a\n\nb") == V{"a", "\n", "\n", "b"});
  CHECK(pieces("a\n b") == V{"a", "\n", " b"});
  CHECK(pieces("end  ") == V{"end", "  "});      // at the end the run is taken whole
  CHECK(pieces(" ") == V{" "});
  CHECK(pieces("  !") == V{" ", " !"});
  CHECK(pieces("café naïve") == V{"café", " naïve"});
  CHECK(pieces("中文字 ok") == V{"中文字", " ok"});
  CHECK(pieces("½ Ⅻ") == V{"½", " Ⅻ"});       // \p{N} is more than digits
  CHECK(pieces("hi 👋🏽!") == V{"hi", " 👋🏽!"});
  CHECK(pieces("a\u00a0b") == V{"a", "\u00a0", "b"});  // no-break space is \s
  // Bytes that are not UTF-8 are symbols, one character each; nothing is lost.
  CHECK(pieces("a\xff\xfe b\xc3") == V{"a", "\xff\xfe", " b", "\xc3"});
  CHECK(pieces("\xe2\x82 x") == V{"\xe2\x82", " x"});  // a truncated character
}

TEST_CASE("pretokenizer: UTF-8 decoding and character classes", "[data][bpe]") {
  CHECK(next_utf8_char("é", 0).code_point == 0xE9);
  CHECK(next_utf8_char("é", 0).length == 2);
  CHECK(next_utf8_char("😀", 0).code_point == 0x1F600);
  CHECK(next_utf8_char("\xc0\xaf", 0).code_point == -1);      // overlong "/"
  CHECK(next_utf8_char("\xed\xa0\x80", 0).code_point == -1);  // a surrogate
  CHECK(next_utf8_char("\xf4\x90\x80\x80", 0).code_point == -1);  // above U+10FFFF
  CHECK(char_class('a') == CharClass::letter);
  CHECK(char_class(0x4E2D) == CharClass::letter);  // 中
  CHECK(char_class(0x0663) == CharClass::number);  // Arabic-Indic three
  CHECK(char_class(0x3000) == CharClass::space);
  CHECK(char_class(0x85) == CharClass::other);     // NEL: Python's \s, not JavaScript's
  CHECK(char_class(0x1F600) == CharClass::other);
  CHECK(char_class(-1) == CharClass::other);
}
