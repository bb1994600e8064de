#include "data/text/bpe_stream_encoder.h"

#include <algorithm>
#include <unordered_map>

#include "data/text/pretokenizer.h"

namespace uwaga {

BpeStreamEncoder::BpeStreamEncoder(const BpeTokenizer& tokenizer)
    : tokenizer_(tokenizer), special_ids_(tokenizer.special_ids()) {
  for (std::int64_t id : special_ids_) special_names_.push_back(tokenizer.token(id));
}

std::vector<std::int64_t> BpeStreamEncoder::feed(std::string_view part) {
  held_.append(part);
  if (held_.size() < retry_at_) return {};
  std::vector<std::int64_t> ids = take_settled();
  retry_at_ = 2 * held_.size();
  return ids;
}

std::vector<std::int64_t> BpeStreamEncoder::finish() {
  std::vector<std::int64_t> ids = tokenizer_.encode_with_special_tokens(held_);
  held_.clear();
  retry_at_ = 0;
  return ids;
}

std::vector<std::int64_t> BpeStreamEncoder::take_settled() {
  const std::string_view text = held_;
  // From `hold` on the text may be the start of a special token's name that the next part
  // finishes: nothing there is settled.
  std::size_t hold = text.size();
  for (const std::string& name : special_names_) {
    for (std::size_t p = text.size() >= name.size() ? text.size() - name.size() + 1 : 0;
         p < text.size(); ++p)
      if (text.substr(p) == std::string_view(name).substr(0, text.size() - p)) {
        hold = std::min(hold, p);
        break;
      }
  }

  // The special tokens before `hold`, and the text before each, as encode_with_special_tokens
  // finds them: the first from `start` (the longer one at a tie).
  std::vector<std::int64_t> ids;
  std::size_t start = 0;
  for (;;) {
    std::size_t at = std::string_view::npos;
    std::size_t found = special_names_.size();
    for (std::size_t k = 0; k < special_names_.size(); ++k) {
      const std::size_t pos = text.find(special_names_[k], start);
      if (pos < at || (pos == at && pos != std::string_view::npos &&
                       special_names_[k].size() > special_names_[found].size()))
        at = pos, found = k;
    }
    if (found == special_names_.size() || at >= hold) break;
    const std::vector<std::int64_t> plain = tokenizer_.encode(text.substr(start, at - start));
    ids.insert(ids.end(), plain.begin(), plain.end());
    ids.push_back(special_ids_[found]);
    start = at + special_names_[found].size();
  }

  // Then the pieces of plain text that kPretokenLookahead bytes follow before `hold`. Each is
  // encoded on its own, as encode does: encoding the settled text as a whole would cut its last
  // piece differently (the end of the text ends a run of whitespace).
  const std::string_view plain = text.substr(start, std::max(hold, start) - start);
  std::unordered_map<std::string_view, std::vector<std::int64_t>> seen;  // piece -> its tokens
  std::size_t settled = 0;
  for (;;) {
    if (settled >= plain.size()) break;
    const std::size_t end = settled + pretoken_length(plain, settled);
    if (end + kPretokenLookahead > plain.size()) break;
    const std::string_view piece = plain.substr(settled, end - settled);
    auto it = seen.find(piece);
    if (it == seen.end()) it = seen.emplace(piece, tokenizer_.encode_piece(piece)).first;
    ids.insert(ids.end(), it->second.begin(), it->second.end());
    settled = end;
  }
  held_.erase(0, start + settled);
  return ids;
}

}  // namespace uwaga
