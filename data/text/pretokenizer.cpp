#include "data/text/pretokenizer.h"

#include "data/text/unicode_classes.h"

namespace uwaga {
namespace {

CharClass class_at(std::string_view text, std::size_t i, std::size_t* length) {
  const Utf8Char c = next_utf8_char(text, i);
  *length = c.length;
  return char_class(c.code_point);
}

// 's 't 're 've 'm 'll 'd at text[i]: its length, or 0.
std::size_t contraction_length(std::string_view text, std::size_t i) {
  if (text[i] != '\'') return 0;
  for (std::string_view c : {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"})
    if (text.substr(i, c.size()) == c) return c.size();
  return 0;
}

}  // namespace

std::size_t pretoken_length(std::string_view text, std::size_t i) {
  const std::size_t n = text.size();
  if (const std::size_t c = contraction_length(text, i)) return c;

  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: an optional space, then a run of one class.
  std::size_t j = i + (text[i] == ' ' && i + 1 < n ? 1 : 0), step;
  const CharClass run = class_at(text, j, &step);
  if (run != CharClass::space) {
    std::size_t k = j + step;
    while (k < n && class_at(text, k, &step) == run) k += step;
    return k - i;
  }

  // Whitespace from i (text[i] is whitespace here, or a space alone before the end).
  std::size_t k = i, last = i;  // last: where the run's last character starts
  while (k < n && class_at(text, k, &step) == CharClass::space) last = k, k += step;
  if (k == n) return n - i;          // `\s+(?!\S)` at the end: the whole run
  if (last > i) return last - i;     // `\s+(?!\S)` backs off one character before a non-space
  return k - i;                      // `\s+`: a single whitespace character before a non-space
}

std::vector<std::string_view> pretokenize(std::string_view text) {
  std::vector<std::string_view> pieces;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = pretoken_length(text, i);
    pieces.push_back(text.substr(i, length));
    i += length;
  }
  return pieces;
}

}  // namespace uwaga
