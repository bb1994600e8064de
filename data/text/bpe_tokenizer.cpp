#include "data/text/bpe_tokenizer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <queue>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_input.h"
#include "core/output_file.h"
#include "core/regular_file.h"
#include "data/text/pretokenizer.h"

namespace uwaga {
namespace {

std::uint64_t pair_key(std::int64_t a, std::int64_t b) {
  return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint64_t>(b);
}

// Replaces every occurrence of (a, b) in `word`, left to right, by `merged`.
template <class Id>
void merge_pair(std::vector<Id>& word, Id a, Id b, Id merged) {
  std::size_t out = 0;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (i + 1 < word.size() && word[i] == a && word[i + 1] == b) word[out++] = merged, ++i;
    else word[out++] = word[i];
  }
  word.resize(out);
}

// GPT-2's files are 1 MB (encoder.json) and 456 kB (vocab.bpe): the bound refuses /dev/zero, or
// a wrong file of gigabytes, before it fills memory.
constexpr std::uint64_t kMaxTokenizerFileBytes = std::uint64_t{64} << 20;

std::string read_file(const std::string& path) {
  return read_regular_file(path, kMaxTokenizerFileBytes, "the tokenizer file '" + path + "'");
}

// Text from a tokenizer file for an error message: control bytes written as \xNN, so that a NUL
// does not end the message early and an escape sequence does not reach the terminal.
std::string shown(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c != 0x7F) {
      out.push_back(static_cast<char>(c));
      continue;
    }
    const char* hex = "0123456789abcdef";
    out += {'\\', 'x', hex[c >> 4], hex[c & 15]};
  }
  return out;
}

// The bytes of a token in GPT-2's printable spelling; fails naming `where` on a character that
// stands for no byte.
std::string printable_to_bytes(const std::string& printable, const std::string& where) {
  static const std::unordered_map<std::string, unsigned char> byte_of = [] {
    std::unordered_map<std::string, unsigned char> m;
    for (int b = 0; b < 256; ++b) m[bytes_to_unicode()[b]] = static_cast<unsigned char>(b);
    return m;
  }();
  std::string bytes;
  for (std::size_t i = 0; i < printable.size();) {
    const unsigned char lead = static_cast<unsigned char>(printable[i]);
    const std::size_t n = lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : 3;
    const auto it = byte_of.find(printable.substr(i, n));
    if (it == byte_of.end())
      fail(where, ": the token \"", shown(printable), "\" holds a character that stands for no byte");
    bytes.push_back(static_cast<char>(it->second));
    i += n;
  }
  return bytes;
}

std::string bytes_to_printable(const std::string& bytes) {
  std::string out;
  for (unsigned char b : bytes) out += bytes_to_unicode()[b];
  return out;
}

}  // namespace

const std::array<std::string, 256>& bytes_to_unicode() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    auto utf8 = [](int cp) {
      std::string s;
      if (cp < 0x80) s.push_back(static_cast<char>(cp));
      else s.push_back(static_cast<char>(0xC0 | (cp >> 6))), s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      return s;  // every code point here is below U+0800
    };
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      t[b] = utf8(printable ? b : next++);
    }
    return t;
  }();
  return table;
}

BpeTokenizer::BpeTokenizer() {
  for (int b = 0; b < 256; ++b) {
    tokens_.push_back(std::string(1, static_cast<char>(b)));
    ids_[tokens_.back()] = b;
    byte_ids_[b] = b;
  }
}

void BpeTokenizer::add_merge(std::int64_t a, std::int64_t b, const std::string& where) {
  const std::uint64_t key = pair_key(a, b);
  if (ranks_.count(key)) fail(where, ": the merge \"", bytes_to_printable(tokens_[a]), " ",
                              bytes_to_printable(tokens_[b]), "\" is listed twice");
  const std::string bytes = tokens_[a] + tokens_[b];
  auto [it, added] = ids_.emplace(bytes, size());
  if (added) tokens_.push_back(bytes);
  ranks_[key] = merge_count();
  merges_.push_back({a, b, it->second});
}

const std::string& BpeTokenizer::token(std::int64_t id) const {
  if (id < 0 || id >= size())
    fail("BpeTokenizer: token id ", id, " is outside the vocabulary of ", size());
  return tokens_[static_cast<std::size_t>(id)];
}

BpeTokenizer BpeTokenizer::train(std::string_view text, std::int64_t merges) {
  if (merges < 0) fail("BpeTokenizer::train: the number of merges must be ≥ 0, got ", merges);
  // Each distinct piece once, with how often it occurs: merges never cross pieces, so counting a
  // pair in a piece that occurs c times adds c.
  std::unordered_map<std::string_view, std::int64_t> piece_index;
  std::vector<std::vector<std::int32_t>> words;
  std::vector<std::int64_t> counts;
  for (std::string_view piece : pretokenize(text)) {
    auto [it, added] = piece_index.emplace(piece, static_cast<std::int64_t>(words.size()));
    if (added) {
      words.emplace_back(piece.begin(), piece.end());
      for (auto& id : words.back()) id = static_cast<unsigned char>(id);
      counts.push_back(0);
    }
    ++counts[static_cast<std::size_t>(it->second)];
  }

  BpeTokenizer tok;
  std::unordered_map<std::uint64_t, std::int64_t> stats;
  for (std::int64_t k = 0; k < merges; ++k) {
    stats.clear();
    for (std::size_t w = 0; w < words.size(); ++w)
      for (std::size_t i = 0; i + 1 < words[w].size(); ++i)
        stats[pair_key(words[w][i], words[w][i + 1])] += counts[w];
    if (stats.empty()) break;  // every piece is one token
    // The most frequent pair; among equals the smaller (a, b), i.e. the smaller key.
    auto best = stats.begin();
    for (auto it = stats.begin(); it != stats.end(); ++it)
      if (it->second > best->second || (it->second == best->second && it->first < best->first))
        best = it;
    const auto a = static_cast<std::int32_t>(best->first >> 32);
    const auto b = static_cast<std::int32_t>(best->first & 0xFFFFFFFFu);
    const auto merged = static_cast<std::int32_t>(tok.size());
    tok.add_merge(a, b, "BpeTokenizer::train");
    for (auto& word : words) merge_pair(word, a, b, merged);
  }
  return tok;
}

std::vector<std::int64_t> BpeTokenizer::encode_piece_reference(std::string_view piece) const {
  std::vector<std::int64_t> word;
  word.reserve(piece.size());
  for (unsigned char c : piece) word.push_back(byte_ids_[c]);
  while (word.size() > 1) {
    // The adjacent pair of lowest rank.
    std::int64_t best = -1;
    for (std::size_t i = 0; i + 1 < word.size(); ++i) {
      const auto it = ranks_.find(pair_key(word[i], word[i + 1]));
      if (it != ranks_.end() && (best < 0 || it->second < best)) best = it->second;
    }
    if (best < 0) break;
    const Merge& m = merges_[static_cast<std::size_t>(best)];
    merge_pair(word, m.a, m.b, m.merged);
  }
  return word;
}

std::vector<std::int64_t> BpeTokenizer::encode_piece(std::string_view piece) const {
  // The tokens as a doubly linked list over the piece's bytes: the token at byte i runs up to the
  // token at next[i]; a merge at i glues the token after it into it, which drops out of the list.
  const std::size_t n = piece.size();
  constexpr std::size_t kEnd = static_cast<std::size_t>(-1);
  std::vector<std::int64_t> id(n);  // the token starting at byte i; -1 once merged into another
  std::vector<std::size_t> next(n), prev(n);
  for (std::size_t i = 0; i < n; ++i) {
    id[i] = byte_ids_[static_cast<unsigned char>(piece[i])];
    next[i] = i + 1 < n ? i + 1 : kEnd;
    prev[i] = i > 0 ? i - 1 : kEnd;
  }

  // An adjacent pair (left, right) that has a merge, as it was when found: it is still there when
  // both tokens are (stale entries are skipped when they come up: lazy invalidation).
  struct Pair {
    std::int64_t rank;
    std::size_t left, right;
    std::int64_t a, b;
  };
  const auto later = [](const Pair& x, const Pair& y) {  // the heap's top: lowest rank, leftmost
    return x.rank != y.rank ? x.rank > y.rank : x.left > y.left;
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(later)> pairs(later);
  const auto ranked = [&](std::size_t left, std::vector<Pair>* out, std::int64_t round) {
    if (left == kEnd || next[left] == kEnd) return;
    const std::size_t right = next[left];
    const auto it = ranks_.find(pair_key(id[left], id[right]));
    if (it == ranks_.end()) return;
    const Pair p{it->second, left, right, id[left], id[right]};
    // A pair a round makes waits for the round's end when its rank is not above the round's,
    // as merge_pair's one pass leaves it for the next.
    if (out && p.rank <= round) out->push_back(p);
    else pairs.push(p);
  };
  for (std::size_t i = 0; i + 1 < n; ++i) ranked(i, nullptr, 0);

  // Rounds, as the reference's loop: the lowest rank present, every occurrence of it left to
  // right (an occurrence whose left token the one before it took is gone).
  std::vector<Pair> waiting;
  while (!pairs.empty()) {
    const std::int64_t round = pairs.top().rank;
    while (!pairs.empty() && pairs.top().rank == round) {
      const Pair p = pairs.top();
      pairs.pop();
      if (id[p.left] != p.a || next[p.left] != p.right || id[p.right] != p.b) continue;  // stale
      id[p.left] = merges_[static_cast<std::size_t>(p.rank)].merged;
      id[p.right] = -1;
      next[p.left] = next[p.right];
      if (next[p.left] != kEnd) prev[next[p.left]] = p.left;
      ranked(prev[p.left], &waiting, round);
      ranked(p.left, &waiting, round);
    }
    for (const Pair& p : waiting) pairs.push(p);
    waiting.clear();
  }

  std::vector<std::int64_t> word;
  for (std::size_t i = 0; i < n && i != kEnd; i = next[i]) word.push_back(id[i]);
  return word;
}

std::vector<std::int64_t> BpeTokenizer::encode(std::string_view text) const {
  std::vector<std::int64_t> ids;
  std::unordered_map<std::string_view, std::vector<std::int64_t>> seen;  // piece -> its tokens
  for (std::size_t i = 0; i < text.size();) {
    const std::string_view piece = text.substr(i, pretoken_length(text, i));
    i += piece.size();
    auto it = seen.find(piece);
    if (it == seen.end()) it = seen.emplace(piece, encode_piece(piece)).first;
    ids.insert(ids.end(), it->second.begin(), it->second.end());
  }
  return ids;
}

std::string BpeTokenizer::decode(const std::vector<std::int64_t>& ids) const {
  std::string text;
  for (std::int64_t id : ids) text += token(id);
  return text;
}

BpeTokenizer BpeTokenizer::load(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir))
    fail("the tokenizer directory '", dir, "' ",
         fs::exists(dir) ? "is not a directory" : "does not exist",
         " (expected encoder.json and vocab.bpe, or vocab.json and merges.txt, in it)");
  std::string vocab_path = dir + "/encoder.json", merges_path = dir + "/vocab.bpe";
  if (!fs::exists(vocab_path) && fs::exists(dir + "/vocab.json"))
    vocab_path = dir + "/vocab.json", merges_path = dir + "/merges.txt";
  if (!fs::exists(vocab_path))
    fail("the tokenizer directory '", dir, "' holds neither encoder.json nor vocab.json");

  // The vocabulary: printable token -> id, ids 0 … V−1 each once.
  const nlohmann::json vocab = parse_json_input(read_file(vocab_path), "'" + vocab_path + "'");
  if (!vocab.is_object() || vocab.empty())
    fail("'", vocab_path, "' should be a JSON object {\"token\": id, ...}");
  std::vector<std::string> tokens(vocab.size());
  std::vector<bool> filled(vocab.size(), false);
  for (const auto& [printable, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
        id.get<std::int64_t>() >= static_cast<std::int64_t>(vocab.size()))
      fail("'", vocab_path, "': the token \"", shown(printable), "\" has the id ", json_brief(id),
           ", expected a whole number from 0 to ", vocab.size() - 1);
    const auto i = id.get<std::size_t>();
    if (filled[i]) fail("'", vocab_path, "': the id ", i, " is given to two tokens");
    filled[i] = true;
    // (<|endoftext|> is printable ASCII, which stands for itself: its bytes are its name.)
    tokens[i] = printable_to_bytes(printable, "'" + vocab_path + "'");
  }

  BpeTokenizer tok = with_tokens(std::move(tokens), "'" + vocab_path + "'");

  // The merges, one "a b" a line after an optional "#version" line, ranked by line.
  std::istringstream lines(read_file(merges_path));
  std::string line;
  for (std::int64_t number = 1; std::getline(lines, line); ++number) {
    const std::string where = "'" + merges_path + "' line " + std::to_string(number);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // Lines ended by CR alone would read as one line, the "#version" line, and the tokenizer as
    // one without merges.
    if (line.find('\r') != std::string::npos)
      fail(where, ": a carriage return (\\r) inside the line; expected one merge a line, each "
           "line ending in \\n (or \\r\\n), not in \\r alone");
    if (line.empty() || (number == 1 && line.rfind("#version", 0) == 0)) continue;
    const std::size_t space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string::npos)
      fail(where, ": expected two tokens separated by one space, got \"", shown(line), "\"");
    std::int64_t ab[2];
    const std::string parts[2] = {line.substr(0, space), line.substr(space + 1)};
    for (int p = 0; p < 2; ++p) {
      const auto it = tok.ids_.find(printable_to_bytes(parts[p], where));
      if (it == tok.ids_.end())
        fail(where, ": the token \"", shown(parts[p]), "\" is not in the vocabulary");
      ab[p] = it->second;
    }
    tok.add_existing_merge(ab[0], ab[1], where);
  }
  // Only merges make the tokens beyond the bytes (special tokens aside): a file without any (cut,
  // or not the merges file) would leave them unreachable and encode text byte by byte.
  if (tok.merge_count() == 0 && tok.size() > 256)
    fail("'", merges_path, "' lists no merges, but '", vocab_path, "' holds ", tok.size() - 256,
         " tokens beyond the 256 bytes, which only merges make (an empty or cut file?)");
  return tok;
}

BpeTokenizer BpeTokenizer::with_tokens(std::vector<std::string> tokens, const std::string& where) {
  BpeTokenizer tok;
  tok.tokens_ = std::move(tokens);
  tok.ids_.clear();
  for (std::size_t i = 0; i < tok.tokens_.size(); ++i) {
    // An empty token would be a special token found everywhere in any text.
    if (tok.tokens_[i].empty()) fail(where, ": the token of id ", i, " is empty");
    if (!tok.ids_.emplace(tok.tokens_[i], static_cast<std::int64_t>(i)).second)
      fail(where, ": the token \"", bytes_to_printable(tok.tokens_[i]), "\" appears twice");
  }
  for (int b = 0; b < 256; ++b) {
    const auto it = tok.ids_.find(std::string(1, static_cast<char>(b)));
    if (it == tok.ids_.end())
      fail(where, " lacks the one-byte token \"", bytes_to_unicode()[b], "\" (byte ", b, ")");
    tok.byte_ids_[b] = it->second;
  }
  return tok;
}

void BpeTokenizer::add_existing_merge(std::int64_t a, std::int64_t b, const std::string& where) {
  if (!ids_.count(tokens_[a] + tokens_[b]))
    fail(where, ": the merged token \"", bytes_to_printable(tokens_[a] + tokens_[b]),
         "\" is not in the vocabulary");
  add_merge(a, b, where);
}

bool BpeTokenizer::made_by_training() const {
  if (size() != 256 + merge_count()) return false;
  for (int b = 0; b < 256; ++b)
    if (byte_ids_[b] != b) return false;
  for (std::size_t k = 0; k < merges_.size(); ++k)
    if (merges_[k].merged != 256 + static_cast<std::int64_t>(k)) return false;
  return true;
}

std::vector<std::int64_t> BpeTokenizer::special_ids() const {
  std::vector<bool> made(tokens_.size(), false);
  for (int b = 0; b < 256; ++b) made[static_cast<std::size_t>(byte_ids_[b])] = true;
  for (const Merge& m : merges_) made[static_cast<std::size_t>(m.merged)] = true;
  std::vector<std::int64_t> special;
  for (std::size_t id = 0; id < made.size(); ++id)
    if (!made[id]) special.push_back(static_cast<std::int64_t>(id));
  return special;
}

std::vector<std::int64_t> BpeTokenizer::encode_with_special_tokens(std::string_view text) const {
  std::vector<std::int64_t> special = special_ids();
  std::vector<std::int64_t> ids;
  std::size_t start = 0;  // the text from here on is not yet encoded
  for (;;) {
    // The special token that occurs first from `start` (the longer one at a tie).
    std::size_t at = std::string_view::npos;
    std::int64_t found = -1;
    for (std::int64_t id : special) {
      const std::string& name = tokens_[static_cast<std::size_t>(id)];
      const std::size_t pos = text.find(name, start);
      if (pos < at || (pos == at && pos != std::string_view::npos &&
                       name.size() > tokens_[static_cast<std::size_t>(found)].size()))
        at = pos, found = id;
    }
    const std::vector<std::int64_t> plain = encode(text.substr(start, at - start));
    ids.insert(ids.end(), plain.begin(), plain.end());
    if (found < 0) return ids;
    ids.push_back(found);
    start = at + tokens_[static_cast<std::size_t>(found)].size();
  }
}

void BpeTokenizer::save(const std::string& dir) const {
  std::filesystem::create_directories(dir);
  nlohmann::json vocab = nlohmann::json::object();
  for (std::size_t i = 0; i < tokens_.size(); ++i) vocab[bytes_to_printable(tokens_[i])] = i;
  write_file_atomically(dir + "/encoder.json", vocab.dump());
  std::string merges = "#version: 0.2\n";
  for (const Merge& m : merges_)
    merges += bytes_to_printable(tokens_[m.a]) + " " + bytes_to_printable(tokens_[m.b]) + "\n";
  write_file_atomically(dir + "/vocab.bpe", merges);
}

std::string BpeTokenizer::to_json() const {
  std::vector<std::int64_t> flat;
  for (const Merge& m : merges_) flat.push_back(m.a), flat.push_back(m.b);
  nlohmann::json j{{"merges", flat}};
  if (!made_by_training()) {  // GPT-2's: every token's spelling, then the merges among them
    std::vector<std::string> printable;
    for (const std::string& t : tokens_) printable.push_back(bytes_to_printable(t));
    j["tokens"] = printable;
  }
  return j.dump();
}

BpeTokenizer BpeTokenizer::from_json(const std::string& json) {
  const char* where = "the BPE tokenizer";
  const nlohmann::json j = parse_json_input(json, where);
  if (!j.is_object() || !j.contains("merges") || !j["merges"].is_array() || j["merges"].size() % 2)
    fail("the BPE tokenizer should be {\"merges\": [a0, b0, a1, b1, ...]} (with \"tokens\": "
         "[...] for a vocabulary of its own), got ", json_brief(j));
  BpeTokenizer tok;
  const bool listed = j.contains("tokens");
  if (listed) {
    const nlohmann::json& t = j["tokens"];
    if (!t.is_array() || t.size() < 256 || t.size() > 1000000)
      fail(where, ": \"tokens\" should be a list of 256 to 1000000 token spellings, got ",
           json_brief(t));
    std::vector<std::string> tokens;
    for (const nlohmann::json& name : t) {
      if (!name.is_string()) fail(where, ": a token should be a string, got ", json_brief(name));
      tokens.push_back(printable_to_bytes(name.get<std::string>(), where));
    }
    tok = with_tokens(std::move(tokens), where);
  }
  const auto& m = j["merges"];
  for (std::size_t k = 0; k < m.size(); k += 2) {
    std::int64_t ab[2];
    for (int p = 0; p < 2; ++p) {
      const auto& v = m[k + p];
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= tok.size())
        fail("the BPE tokenizer: merge ", k / 2, " names the token ", json_brief(v),
             ", expected an id below ", tok.size());
      ab[p] = v.get<std::int64_t>();
    }
    if (listed) {
      tok.add_existing_merge(ab[0], ab[1], where);
      continue;
    }
    const std::int64_t before = tok.size();
    tok.add_merge(ab[0], ab[1], where);
    if (tok.size() != before + 1)
      fail("the BPE tokenizer: merge ", k / 2, " makes a token that exists already");
  }
  return tok;
}

}  // namespace uwaga
