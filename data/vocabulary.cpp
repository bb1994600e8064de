#include "data/vocabulary.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace uwaga {
namespace {

const char* const kSpecials[] = {"<pad>", "<bos>", "<eos>", "<unk>"};

bool is_separator(unsigned char c) {
  return c < 0x80 && (std::isspace(c) || std::ispunct(c));
}

}  // namespace

std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (unsigned char c : text) {
    if (is_separator(c)) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(c < 0x80 ? static_cast<char>(std::tolower(c)) : static_cast<char>(c));
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
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

std::string Vocabulary::to_json() const { return nlohmann::json{{"tokens", words_}}.dump(); }

Vocabulary Vocabulary::from_json(const std::string& json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    fail("Vocabulary::from_json: not valid JSON: ", e.what());
  }
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
