#include "data/translation/vocabulary.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_input.h"

namespace uwaga {
namespace {

const char* const kSpecials[] = {"<pad>", "<bos>", "<eos>", "<unk>"};

// Punctuation and spaces outside ASCII that separate words, as UTF-8 bytes: without them "¿we" or
// "bread”" would be one word, and a file saved with a byte-order mark would glue it to its first
// word. The corpus holds none of them, so they change no trained model.
const char* const kUnicodeSeparators[] = {
    "\xC2\xA0",  // no-break space
    "\xC2\xA1",  // ¡
    "\xC2\xBF",  // ¿
    "\xC2\xAB",  // «
    "\xC2\xBB",  // »
    "\xE2\x80\x93",  // – en dash
    "\xE2\x80\x94",  // — em dash
    "\xE2\x80\x98",  // ‘
    "\xE2\x80\x99",  // ’ (the typographic apostrophe: "don’t" splits as "don't" does)
    "\xE2\x80\x9C",  // “
    "\xE2\x80\x9D",  // ”
    "\xE2\x80\xA6",  // …
    "\xE2\x80\x8B",  // zero-width space
    "\xEF\xBB\xBF",  // byte-order mark (zero-width no-break space)
};

// Every ASCII character but letters and digits: spaces, punctuation and control characters.
bool is_ascii_separator(unsigned char c) { return c < 0x80 && !std::isalnum(c); }

// The length in bytes of the non-ASCII separator starting at text[i], or 0 for none.
std::size_t unicode_separator_at(const std::string& text, std::size_t i) {
  for (const char* sep : kUnicodeSeparators)
    if (text.compare(i, std::strlen(sep), sep) == 0) return std::strlen(sep);
  return 0;
}

}  // namespace

std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  auto end_word = [&] {
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (is_ascii_separator(c)) {
      end_word();
    } else if (c < 0x80) {
      word.push_back(static_cast<char>(std::tolower(c)));
    } else if (const std::size_t n = unicode_separator_at(text, i)) {
      end_word();
      i += n - 1;
    } else {
      word.push_back(static_cast<char>(c));
    }
  }
  end_word();
  return words;
}

Vocabulary::Vocabulary() {
  for (const char* s : kSpecials) add(s);
}

void Vocabulary::add(const std::string& word) {
  ids_.emplace(word, size());
  words_.push_back(word);
}

Vocabulary Vocabulary::build(const std::vector<std::string>& sentences, std::int64_t min_count) {
  std::map<std::string, std::int64_t> counts;  // ordered: the ids come out alphabetical
  for (const std::string& s : sentences)
    for (const std::string& w : tokenize(s)) ++counts[w];
  Vocabulary vocab;
  for (const auto& [word, count] : counts)
    if (count >= min_count && !vocab.contains(word)) vocab.add(word);
  return vocab;
}

std::int64_t Vocabulary::id(const std::string& word) const {
  const auto it = ids_.find(word);
  return it == ids_.end() ? kUnk : it->second;
}

const std::string& Vocabulary::word(std::int64_t id) const {
  if (id < 0 || id >= size())
    fail("Vocabulary: id ", id, " out of range for a vocabulary of ", size(), " words");
  return words_[static_cast<std::size_t>(id)];
}

std::vector<std::int64_t> Vocabulary::encode(const std::string& text, bool add_bos_eos) const {
  std::vector<std::int64_t> ids;
  if (add_bos_eos) ids.push_back(kBos);
  for (const std::string& w : tokenize(text)) ids.push_back(id(w));
  if (add_bos_eos) ids.push_back(kEos);
  return ids;
}

std::string Vocabulary::decode(const std::vector<std::int64_t>& ids) const {
  std::string text;
  for (std::int64_t i : ids) {
    if (i == kEos) break;
    if (i == kPad || i == kBos) continue;
    const std::string& w = (i >= 0 && i < size()) ? words_[static_cast<std::size_t>(i)]
                                                  : words_[kUnk];
    if (!text.empty()) text += ' ';
    text += w;
  }
  return text;
}

std::string Vocabulary::to_json() const {
  // JSON text is UTF-8: a word built from other bytes (a corpus in Latin-1) cannot be written.
  try {
    return nlohmann::json{{"tokens", words_}}.dump();
  } catch (const nlohmann::json::type_error& e) {
    fail("Vocabulary::to_json: a word is not valid UTF-8, so the vocabulary cannot be saved (",
         e.what(), ")");
  }
}

Vocabulary Vocabulary::from_json(const std::string& json) {
  const nlohmann::json j = parse_json_input(json, "Vocabulary::from_json: the vocabulary");
  if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array())
    fail("Vocabulary::from_json: expected an object {\"tokens\": [...]}");
  const auto& tokens = j["tokens"];
  if (tokens.size() < 4)
    fail("Vocabulary::from_json: ", tokens.size(), " tokens; expected at least the 4 special ones");
  Vocabulary vocab;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].is_string()) fail("Vocabulary::from_json: token ", i, " is not a string");
    const std::string w = tokens[i].get<std::string>();
    if (i < 4) {
      if (w != kSpecials[i])
        fail("Vocabulary::from_json: token ", i, " is '", w, "'; expected '", kSpecials[i], "'");
      continue;
    }
    if (vocab.contains(w)) fail("Vocabulary::from_json: token '", w, "' appears twice");
    vocab.add(w);
  }
  return vocab;
}

}  // namespace uwaga
