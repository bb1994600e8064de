#include "data/text/unicode_classes.h"

#include <algorithm>
#include <iterator>

namespace uwaga {
namespace {

struct CodePointRange {
  std::int32_t first, last;  // inclusive
};

#include "data/text/unicode_classes_table.inc"

template <std::size_t N>
bool in_ranges(const CodePointRange (&ranges)[N], std::int32_t cp) {
  // The first range whose last code point is ≥ cp; cp is in it when it starts at or before cp.
  const auto it = std::lower_bound(std::begin(ranges), std::end(ranges), cp,
                                   [](const CodePointRange& r, std::int32_t c) { return r.last < c; });
  return it != std::end(ranges) && it->first <= cp;
}

bool is_js_space(std::int32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000: case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

}  // namespace

Utf8Char next_utf8_char(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return {b0, 1};
  std::size_t length;
  std::int32_t cp, min;
  if ((b0 & 0xE0) == 0xC0) length = 2, cp = b0 & 0x1F, min = 0x80;
  else if ((b0 & 0xF0) == 0xE0) length = 3, cp = b0 & 0x0F, min = 0x800;
  else if ((b0 & 0xF8) == 0xF0) length = 4, cp = b0 & 0x07, min = 0x10000;
  else return {};  // a continuation byte or 0xF8…0xFF where a character should start
  if (i + length > text.size()) return {};
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, length};
}

CharClass char_class(std::int32_t cp) {
  if (cp < 0) return CharClass::other;
  if (cp < 0x80) {  // the common case, without a search
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return CharClass::letter;
    if (cp >= '0' && cp <= '9') return CharClass::number;
    return is_js_space(cp) ? CharClass::space : CharClass::other;
  }
  if (is_js_space(cp)) return CharClass::space;
  if (in_ranges(kLetters, cp)) return CharClass::letter;
  if (in_ranges(kNumbers, cp)) return CharClass::number;
  return CharClass::other;
}

}  // namespace uwaga
