#pragma once
// A character-level corpus for language modelling (tinyshakespeare): the text is a sequence of
// characters (bytes), each an id in a vocabulary built from the training text, and the model
// learns to predict character t+1 from characters 0…t.
//
//   CharVocabulary  the distinct bytes of the training text, sorted: id = position. It travels in
//                   the checkpoint's run configuration, so sampling maps ids back to the same
//                   characters.
//   CharCorpus      the text split in two: the first 90 % trains, the last 10 % validates
//                   (a contiguous tail, so no validation window overlaps a training one).
//   CharWindows     the training batches: B windows of T + 1 characters at random offsets;
//                   inputs are characters 0…T−1 of a window, targets characters 1…T.
#include <cstdint>
#include <string>
#include <vector>

#include "data/batch_source.h"

namespace uwaga {

class CharVocabulary {
 public:
  CharVocabulary() = default;
  // Every distinct byte of `text`, in byte order.
  static CharVocabulary build(const std::string& text);

  std::int64_t size() const { return static_cast<std::int64_t>(chars_.size()); }
  bool contains(char c) const { return ids_[static_cast<unsigned char>(c)] >= 0; }
  std::int64_t id(char c) const;  // fails for a character outside the vocabulary
  char character(std::int64_t id) const;
  const std::string& characters() const { return chars_; }

  // Ids of every character of `text`; fails naming the characters outside the vocabulary.
  std::vector<std::int64_t> encode(const std::string& text) const;
  std::string decode(const std::vector<std::int64_t>& ids) const;
  // The distinct characters of `text` the vocabulary lacks, in order of first appearance.
  std::string unknown(const std::string& text) const;

  // {"bytes": [10, 32, 33, ...]}: byte values, since a byte of a UTF-8 character on its own is
  // not valid JSON text.
  std::string to_json() const;
  static CharVocabulary from_json(const std::string& json);

 private:
  std::string chars_;                 // id -> character
  std::vector<std::int64_t> ids_ = std::vector<std::int64_t>(256, -1);  // byte -> id, −1: none
};

// The whole file as bytes; fails naming the file when it is missing, unreadable, not a regular
// file (a FIFO would block, /dev/zero never ends) or larger than kMaxTextBytes. A character
// corpus becomes int64 ids (8 bytes a character) and a split of them: 128 MiB of text is ~3 GB.
inline constexpr std::uint64_t kMaxTextBytes = std::uint64_t{128} << 20;
std::string read_text_file(const std::string& path);

struct CharCorpus {
  CharVocabulary vocab;             // of the training text
  std::vector<std::int64_t> train;  // the first 90 % of the text, as ids
  std::vector<std::int64_t> valid;  // the last 10 %; characters unseen in training fail
};

// Splits `text` (read from `path`, named in errors) 90 / 10 and encodes both parts with the
// vocabulary of the training part. Each part must hold one window of `context` + 1 characters.
CharCorpus split_char_corpus(const std::string& text, const std::string& path,
                             std::int64_t context);
// As above with a given vocabulary (a resumed run, or eval of a checkpoint).
CharCorpus split_char_corpus(const std::string& text, const std::string& path,
                             std::int64_t context, const CharVocabulary& vocab);

// Random windows of a long id sequence. Batch i of epoch e is drawn from a generator seeded with
// (seed, e, i) alone, so a resumed run sees the batches an uninterrupted one would have. An
// "epoch" is just `batches_per_epoch` batches: the windows are sampled with replacement.
class CharWindows : public BatchSource {
 public:
  CharWindows(std::vector<std::int64_t> ids, std::int64_t batch_size, std::int64_t context,
              std::int64_t batches_per_epoch, std::uint64_t seed);

  std::int64_t batches_per_epoch() const override { return batches_per_epoch_; }
  void begin_epoch(std::int64_t epoch) override { epoch_ = epoch; }
  // inputs {ids (B, T)}, targets (B, T): targets[b][t] = inputs[b][t + 1] within the window.
  Batch batch(std::int64_t index) override;

 private:
  std::vector<std::int64_t> ids_;
  std::int64_t batch_size_, context_, batches_per_epoch_;
  std::uint64_t seed_;
  std::int64_t epoch_ = 0;
};

// The windows at offsets 0, T, 2T, … of `ids` (the last one may not fit and is left out), as
// one batch of `count` of them from window `first` on: how validation covers its text once.
Batch consecutive_windows(const std::vector<std::int64_t>& ids, std::int64_t context,
                          std::int64_t first, std::int64_t count);
// How many windows of `context` + 1 characters consecutive_windows can take from `ids`.
std::int64_t consecutive_window_count(const std::vector<std::int64_t>& ids, std::int64_t context);

}  // namespace uwaga
