#pragma once
// Byte-pair encoding of text that arrives in parts — standard input, read a block at a time —
// giving the ids encode_with_special_tokens gives the whole text, while holding only the end
// that the next part could still change:
//   - a special token's name cut by the end of a part (GPT-2's "<|endoftext|>" as "<|endo" +
//     "ftext|>") waits for the rest;
//   - the pre-tokenizer's last pieces wait: a piece is settled once kPretokenLookahead bytes follow
//     it (data/text/pretokenizer.h), since the pieces are found from the front, each from its own
//     start onwards. A newline is no safe place to cut: "\n\n" is one piece, and a run of spaces
//     gives its last one to the word after it.
// One long piece (a megabyte of letters without a space) waits whole; it is looked at again only
// once the text held has doubled, so feeding n bytes costs O(n) besides the encoding.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/text/bpe_tokenizer.h"

namespace uwaga {

class BpeStreamEncoder {
 public:
  explicit BpeStreamEncoder(const BpeTokenizer& tokenizer);  // kept by reference

  // Takes the next part of the text; returns the ids of the text now settled (often none).
  std::vector<std::int64_t> feed(std::string_view part);
  // At the end of the text: the ids of what was held back.
  std::vector<std::int64_t> finish();
  std::size_t held_bytes() const { return held_.size(); }

 private:
  // The ids of the settled front of held_, which is then dropped from it.
  std::vector<std::int64_t> take_settled();

  const BpeTokenizer& tokenizer_;
  std::vector<std::string> special_names_;  // by the order of special_ids()
  std::vector<std::int64_t> special_ids_;
  std::string held_;        // the text not yet encoded; starts where a piece or segment starts
  std::size_t retry_at_ = 0;  // take_settled again once held_ is this long
};

}  // namespace uwaga
