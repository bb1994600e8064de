#pragma once
// Vocabulary: the word <-> id table of a translation model. Ids 0..3 are reserved:
//   PAD = 0  fills the end of shorter sentences in a batch (and is masked out of attention/loss)
//   BOS = 1  "beginning of sentence": the decoder's first input
//   EOS = 2  "end of sentence": the decoder's last target; generation stops when it comes out
//   UNK = 3  any word not seen in training
// then the words of the training sentences in alphabetical order (so the same sentences always
// give the same ids). A vocabulary travels inside a checkpoint as a JSON string.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace uwaga {

// Splits text into words: ASCII letters are lowercased; ASCII punctuation, whitespace and control
// characters separate words and are dropped, and so are the common non-ASCII separators
// (¿ ¡ « » ‘ ’ “ ” … – —, the no-break and zero-width spaces, a byte-order mark); other bytes
// (UTF-8 letters such as "é") stay as they are.
//   "We are eating bread." -> {"we", "are", "eating", "bread"}
//   "¿Él come pan?"        -> {"Él", "come", "pan"}   (only ASCII letters are lowercased)
std::vector<std::string> tokenize(const std::string& text);

class Vocabulary {
 public:
  static constexpr std::int64_t kPad = 0;
  static constexpr std::int64_t kBos = 1;
  static constexpr std::int64_t kEos = 2;
  static constexpr std::int64_t kUnk = 3;

  Vocabulary();  // only the four special tokens

  // Every word of `sentences` (tokenized) that appears at least min_count times.
  static Vocabulary build(const std::vector<std::string>& sentences, std::int64_t min_count = 1);

  std::int64_t size() const { return static_cast<std::int64_t>(words_.size()); }
  bool contains(const std::string& word) const { return ids_.count(word) != 0; }
  std::int64_t id(const std::string& word) const;  // kUnk for unknown words
  const std::string& word(std::int64_t id) const;  // "<pad>", "<bos>", "<eos>", "<unk>" for 0..3
  const std::vector<std::string>& words() const { return words_; }

  // Ids of the words of `text`, wrapped in BOS ... EOS when asked.
  std::vector<std::int64_t> encode(const std::string& text, bool add_bos_eos = false) const;
  // Words joined by single spaces; BOS and PAD are skipped, EOS ends the sentence, unknown ids
  // come out as "<unk>".
  std::string decode(const std::vector<std::int64_t>& ids) const;

  // {"tokens": ["<pad>", "<bos>", "<eos>", "<unk>", "a", ...]}: the id of a word is its position.
  std::string to_json() const;
  static Vocabulary from_json(const std::string& json);

  bool operator==(const Vocabulary& other) const { return words_ == other.words_; }

 private:
  void add(const std::string& word);

  std::vector<std::string> words_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

}  // namespace uwaga
