#pragma once
// Text the user typed or a file name, made safe to print on a terminal and to put in an SVG.
#include <cstddef>
#include <string>

namespace uwaga::apps {

// The length of the well-formed UTF-8 character at text[i] (1 to 4 bytes), or 0 when the bytes
// there are not one: a stray continuation byte, a truncated or overlong sequence, a surrogate
// (the ranges of the Unicode standard, table 3-7).
std::size_t utf8_character_at(const std::string& text, std::size_t i);

// Whether every byte of `text` belongs to a well-formed UTF-8 character.
bool is_utf8(const std::string& text);

// Fails with "<flag> <path as printable> is not valid UTF-8; ..." when `path` is not: a run
// records its paths in JSON (run.json, the checkpoint's metadata), which holds UTF-8 only.
void require_utf8_path(const char* flag, const std::string& path);

// `text` with a tab turned into a space and every byte that is not UTF-8, and every other control
// character (an escape, a stray CR), turned into U+FFFD "�". Raw, they garble the terminal, and
// XML forbids them: an SVG holding one is ill-formed and no viewer opens it.
std::string printable(const std::string& text);

}  // namespace uwaga::apps
