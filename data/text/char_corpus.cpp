#include "data/text/char_corpus.h"

#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_input.h"
#include "core/random.h"
#include "core/regular_file.h"
#include "data/images/augment.h"

namespace uwaga {

CharVocabulary CharVocabulary::build(const std::string& text) {
  bool seen[256] = {};
  for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  CharVocabulary vocab;
  for (int b = 0; b < 256; ++b) {
    if (!seen[b]) continue;
    vocab.ids_[b] = vocab.size();
    vocab.chars_.push_back(static_cast<char>(b));
  }
  return vocab;
}

std::int64_t CharVocabulary::id(char c) const {
  const std::int64_t i = ids_[static_cast<unsigned char>(c)];
  if (i < 0) fail("CharVocabulary: byte ", static_cast<int>(static_cast<unsigned char>(c)),
                  " is not in the vocabulary of ", size(), " characters");
  return i;
}

char CharVocabulary::character(std::int64_t id) const {
  if (id < 0 || id >= size())
    fail("CharVocabulary: id ", id, " is outside the vocabulary of ", size(), " characters");
  return chars_[static_cast<std::size_t>(id)];
}

std::vector<std::int64_t> CharVocabulary::encode(const std::string& text) const {
  if (const std::string missing = unknown(text); !missing.empty())
    fail("CharVocabulary: the text has ", missing.size(),
         missing.size() == 1 ? " character" : " characters", " not in the vocabulary");
  std::vector<std::int64_t> ids(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) ids[i] = ids_[static_cast<unsigned char>(text[i])];
  return ids;
}

std::string CharVocabulary::decode(const std::vector<std::int64_t>& ids) const {
  std::string text;
  for (std::int64_t id : ids) text.push_back(character(id));
  return text;
}

std::string CharVocabulary::unknown(const std::string& text) const {
  std::string missing;
  for (char c : text)
    if (!contains(c) && missing.find(c) == std::string::npos) missing.push_back(c);
  return missing;
}

std::string CharVocabulary::to_json() const {
  nlohmann::json bytes = nlohmann::json::array();
  for (char c : chars_) bytes.push_back(static_cast<int>(static_cast<unsigned char>(c)));
  return nlohmann::json{{"bytes", bytes}}.dump();
}

CharVocabulary CharVocabulary::from_json(const std::string& json) {
  const char* what = "CharVocabulary::from_json";
  const nlohmann::json j = parse_json_input(json, what);
  if (!j.is_object() || !j.contains("bytes") || !j["bytes"].is_array())
    fail(what, ": expected an object {\"bytes\": [...]}");
  CharVocabulary vocab;
  for (const auto& b : j["bytes"]) {
    if (!b.is_number_integer() || b.get<std::int64_t>() < 0 || b.get<std::int64_t>() > 255)
      fail(what, ": ", b.dump(), " is not a byte value from 0 to 255");
    const auto byte = static_cast<unsigned char>(b.get<int>());
    if (vocab.ids_[byte] >= 0) fail(what, ": byte ", static_cast<int>(byte), " appears twice");
    vocab.ids_[byte] = vocab.size();
    vocab.chars_.push_back(static_cast<char>(byte));
  }
  if (vocab.size() == 0) fail(what, ": the vocabulary is empty");
  return vocab;
}

std::string read_text_file(const std::string& path) {
  return read_regular_file(path, kMaxTextBytes, "the text file '" + path + "'");
}

namespace {

void check_holds_a_window(const std::string& part_text, const char* part,
                          const std::string& path, std::int64_t context) {
  if (static_cast<std::int64_t>(part_text.size()) < context + 1)
    fail("the ", part, " part of '", path, "' has ", part_text.size(),
         " characters, fewer than one window of --context ", context, " + 1 characters");
}

}  // namespace

CharCorpus split_char_corpus(const std::string& text, const std::string& path,
                             std::int64_t context) {
  const std::size_t cut = text.size() - text.size() / 10;  // the first 90 % trains
  return split_char_corpus(text, path, context, CharVocabulary::build(text.substr(0, cut)));
}

CharCorpus split_char_corpus(const std::string& text, const std::string& path,
                             std::int64_t context, const CharVocabulary& vocab) {
  const std::size_t cut = text.size() - text.size() / 10;
  const std::string train = text.substr(0, cut), valid = text.substr(cut);
  check_holds_a_window(train, "training (first 90 %)", path, context);
  check_holds_a_window(valid, "validation (last 10 %)", path, context);
  if (const std::string missing = vocab.unknown(text); !missing.empty())
    fail("'", path, "' holds ", missing.size(), missing.size() == 1 ? " character" : " characters",
         " outside the vocabulary of its training part (the first 90 %)");
  return CharCorpus{vocab, vocab.encode(train), vocab.encode(valid)};
}

CharWindows::CharWindows(std::vector<std::int64_t> ids, std::int64_t batch_size,
                         std::int64_t context, std::int64_t batches_per_epoch, std::uint64_t seed)
    : ids_(std::move(ids)),
      batch_size_(batch_size),
      context_(context),
      batches_per_epoch_(batches_per_epoch),
      seed_(seed) {
  if (batch_size < 1) fail("CharWindows: batch size must be positive, got ", batch_size);
  if (context < 1) fail("CharWindows: context must be positive, got ", context);
  if (batches_per_epoch < 1)
    fail("CharWindows: batches per epoch must be positive, got ", batches_per_epoch);
  if (static_cast<std::int64_t>(ids_.size()) < context + 1)
    fail("CharWindows: ", ids_.size(), " characters hold no window of ", context + 1);
}

Batch CharWindows::batch(std::int64_t index) {
  const std::int64_t B = batch_size_, T = context_;
  Generator gen(derive_seed(seed_, static_cast<std::uint64_t>(epoch_),
                            static_cast<std::uint64_t>(index)));
  const auto offsets = static_cast<std::uint64_t>(ids_.size()) - static_cast<std::uint64_t>(T);
  Batch b{{Tensor::empty({B, T}, DType::Int64)}, Tensor::empty({B, T}, DType::Int64)};
  std::int64_t* x = b.inputs[0].data<std::int64_t>();  // (B, T)
  std::int64_t* y = b.targets.data<std::int64_t>();    // (B, T)
  for (std::int64_t r = 0; r < B; ++r) {
    const std::int64_t* window = ids_.data() + gen.below(offsets);  // T + 1 characters
    std::copy(window, window + T, x + r * T);
    std::copy(window + 1, window + T + 1, y + r * T);
  }
  return b;
}

std::int64_t consecutive_window_count(const std::vector<std::int64_t>& ids, std::int64_t context) {
  if (context < 1) fail("consecutive windows: context must be positive, got ", context);
  return (static_cast<std::int64_t>(ids.size()) - 1) / context;
}

Batch consecutive_windows(const std::vector<std::int64_t>& ids, std::int64_t context,
                          std::int64_t first, std::int64_t count) {
  const std::int64_t T = context;
  if (first < 0 || count < 1 || first + count > consecutive_window_count(ids, T))
    fail("consecutive_windows: windows ", first, " to ", first + count, " of ",
         consecutive_window_count(ids, T), " do not exist");
  Batch b{{Tensor::empty({count, T}, DType::Int64)}, Tensor::empty({count, T}, DType::Int64)};
  std::int64_t* x = b.inputs[0].data<std::int64_t>();  // (count, T)
  std::int64_t* y = b.targets.data<std::int64_t>();    // (count, T)
  for (std::int64_t r = 0; r < count; ++r) {
    const std::int64_t* window = ids.data() + (first + r) * T;
    std::copy(window, window + T, x + r * T);
    std::copy(window + 1, window + T + 1, y + r * T);
  }
  return b;
}

}  // namespace uwaga
