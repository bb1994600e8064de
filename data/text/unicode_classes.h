#pragma once
// The character classes GPT-2's pre-tokenizer pattern uses, on UTF-8 text:
//   letter   \p{L}: Unicode categories Lu Ll Lt Lm Lo ("a", "é", "中", "ß")
//   number   \p{N}: Nd Nl No ("7", "٣", "Ⅻ", "½")
//   space    \s as JavaScript defines it (the reference encoder is JavaScript): tab, newline,
//            vertical tab, form feed, carriage return, space, U+00A0, U+1680, U+2000…U+200A,
//            U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF
//   other    everything else: punctuation, symbols, emoji, controls — and each byte that is not
//            part of a well-formed UTF-8 character, which counts as one character on its own.
// The letter and number tables come from Python's unicodedata (data/text/make_unicode_classes.py).
#include <cstdint>
#include <string_view>

namespace uwaga {

enum class CharClass { letter, number, space, other };

struct Utf8Char {
  std::int32_t code_point = -1;  // −1: a byte that starts no well-formed character
  std::size_t length = 1;        // bytes: 1 … 4
};

// The character starting at text[i] (i < text.size()). Well-formed means the shortest encoding
// of a code point up to U+10FFFF that is not a surrogate (U+D800…U+DFFF), as UTF-8 requires.
Utf8Char next_utf8_char(std::string_view text, std::size_t i);

CharClass char_class(std::int32_t code_point);  // −1 (an ill-formed byte): other

}  // namespace uwaga
