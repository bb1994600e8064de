#pragma once
// GPT-2's pre-tokenizer: before byte pairs are merged, text is cut into pieces that no merge
// may cross — words, numbers, runs of punctuation, runs of whitespace. GPT-2 writes it as the
// regular expression
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// tried left to right at each position, the first alternative that matches winning:
//   - the English contractions 's 't 're 've 'm 'll 'd (lower case only) are pieces of their own;
//   - a word (letters), a number (digits) or a run of other symbols takes one space before it:
//     "Hello world" -> "Hello", " world", so " world" is one token in GPT-2's vocabulary;
//   - a run of whitespace leaves its last character to the word after it: "a   b" ->
//     "a", "  ", " b"; at the end of the text it is taken whole.
// This file is that expression written as a scanner (no regex engine), with the classes of
// data/text/unicode_classes.h. Bytes that are not well-formed UTF-8 count as symbols, one character
// each, so every byte of the text lands in exactly one piece: the pieces concatenate to the text.
#include <cstddef>
#include <string_view>
#include <vector>

namespace uwaga {

// The pieces of `text`, in order, as views into it.
std::vector<std::string_view> pretokenize(std::string_view text);

// The length in bytes of the piece that starts at text[i] (i < text.size()). It depends on no
// byte before i, nor at or after i + length + kPretokenLookahead: a piece ends where a character
// of another class starts (at most 4 bytes read past it), or one whitespace character before
// that. So text that arrives in parts can be cut into the same pieces as the whole text, holding
// back only what lies within kPretokenLookahead of the end (data/text/bpe_stream_encoder.h).
std::size_t pretoken_length(std::string_view text, std::size_t i);
inline constexpr std::size_t kPretokenLookahead = 8;

}  // namespace uwaga
