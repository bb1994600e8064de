#include "apps/common/printable_text.h"

#include "core/error.h"

namespace uwaga::apps {

std::size_t utf8_character_at(const std::string& text, std::size_t i) {
  auto byte = [&](std::size_t k) -> unsigned {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
  };
  auto in = [&](std::size_t k, unsigned lo, unsigned hi) { return byte(k) >= lo && byte(k) <= hi; };
  const unsigned c = byte(0);
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  if (c >= 0xE0 && c <= 0xEF) n = 3;
  if (c >= 0xF0 && c <= 0xF4) n = 4;
  if (c == 0xE0) lo = 0xA0;  // not overlong
  if (c == 0xED) hi = 0x9F;  // not a surrogate
  if (c == 0xF0) lo = 0x90;  // not overlong
  if (c == 0xF4) hi = 0x8F;  // not above U+10FFFF
  if (n == 0 || !in(1, lo, hi)) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (!in(k, 0x80, 0xBF)) return 0;
  return n;
}

std::string printable(const std::string& text) {
  static const std::string kReplacement = "\xEF\xBF\xBD";
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_character_at(text, i);
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\t') {
      out += ' ';
      i += 1;
    } else if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
      out += kReplacement;
      i += 1;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

bool is_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_character_at(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void require_utf8_path(const char* flag, const std::string& path) {
  if (!is_utf8(path))
    fail(flag, " '", printable(path), "' is not valid UTF-8; the run records its paths in JSON, "
         "which holds UTF-8 only (rename it, or use a link with a UTF-8 name)");
}

}  // namespace uwaga::apps
