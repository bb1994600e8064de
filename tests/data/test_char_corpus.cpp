// The character corpus: the vocabulary comes from the training text and round-trips through
// JSON; the split is 90 / 10; a batch's targets are its inputs shifted by one; batch i of epoch e
// depends only on (seed, e, i); a text too short for one window fails naming the file and flag.
#include <catch2/catch.hpp>

#include <fstream>

#include "core/error.h"
#include "data/text/char_corpus.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using Catch::Contains;

TEST_CASE("CharVocabulary: sorted distinct bytes, encode/decode and JSON", "[char_corpus]") {
  const CharVocabulary v = CharVocabulary::build("hello, world");
  CHECK(v.characters() == " ,dehlorw");
  CHECK(v.encode("hello") == std::vector<std::int64_t>{4, 3, 5, 5, 6});
  CHECK(v.decode(v.encode("low, dell")) == "low, dell");
  CHECK(v.unknown("hallo, Welt!") == "aWt!");
  CHECK_THROWS_WITH(v.encode("hi!"), Contains("2 characters"));
  const CharVocabulary back = CharVocabulary::from_json(v.to_json());
  CHECK(back.characters() == v.characters());
  CHECK(back.id('w') == v.id('w'));
  CHECK_THROWS_WITH(CharVocabulary::from_json("{\"bytes\": [65, 65]}"), Contains("twice"));
  CHECK_THROWS_WITH(CharVocabulary::from_json("{\"bytes\": [300]}"), Contains("byte value"));
}

TEST_CASE("split_char_corpus: the first 90 % trains, the last 10 % validates", "[char_corpus]") {
  std::string text;
  for (int i = 0; i < 100; ++i) text += static_cast<char>('a' + i % 7);
  const CharCorpus c = split_char_corpus(text, "t.txt", 4);
  CHECK(c.train.size() == 90);
  CHECK(c.valid.size() == 10);
  CHECK(c.vocab.decode(c.valid) == text.substr(90));
  CHECK_THROWS_WITH(split_char_corpus(text, "t.txt", 10),
                    Contains("'t.txt'") && Contains("--context 10"));
  // A character only the validation part has is not in the vocabulary.
  CHECK_THROWS_WITH(split_char_corpus(text.substr(0, 95) + "zzzzz", "t.txt", 4),
                    Contains("holds 1 character outside the vocabulary"));
  CHECK_THROWS_WITH(split_char_corpus(text.substr(0, 95) + "zzzzy", "t.txt", 4),
                    Contains("holds 2 characters outside the vocabulary"));
}

TEST_CASE("read_text_file names a missing file", "[char_corpus]") {
  testing::TempDir dir("char-corpus");
  CHECK_THROWS_WITH(read_text_file(dir.file("missing.txt")), Contains("missing.txt"));
  std::ofstream(dir.file("a.txt")) << "abc\n";
  CHECK(read_text_file(dir.file("a.txt")) == "abc\n");
}

TEST_CASE("CharWindows: targets are the next characters; batches depend on (seed, e, i)",
          "[char_corpus]") {
  std::vector<std::int64_t> ids(500);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i);
  CharWindows w(ids, 8, 16, 5, 42);
  CHECK(w.batches_per_epoch() == 5);
  w.begin_epoch(3);
  const Batch b = w.batch(2);
  REQUIRE(b.inputs[0].shape() == Shape{8, 16});
  REQUIRE(b.targets.shape() == Shape{8, 16});
  const auto x = b.inputs[0].to_indices(), y = b.targets.to_indices();
  for (std::size_t k = 0; k < x.size(); ++k) CHECK(y[k] == x[k] + 1);  // ids are positions
  for (std::size_t r = 0; r < 8; ++r) CHECK(x[r * 16 + 15] == x[r * 16] + 15);  // contiguous

  // The same (seed, epoch, index) gives the same batch whatever came before; others differ.
  CharWindows again(ids, 8, 16, 5, 42);
  again.begin_epoch(0);
  (void)again.batch(4);
  again.begin_epoch(3);
  CHECK(again.batch(2).inputs[0].to_indices() == x);
  CHECK(again.batch(1).inputs[0].to_indices() != x);
  again.begin_epoch(4);
  CHECK(again.batch(2).inputs[0].to_indices() != x);
  CharWindows other_seed(ids, 8, 16, 5, 43);
  other_seed.begin_epoch(3);
  CHECK(other_seed.batch(2).inputs[0].to_indices() != x);
}

TEST_CASE("consecutive_windows cover the text once, without overlap", "[char_corpus]") {
  std::vector<std::int64_t> ids(35);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i);
  CHECK(consecutive_window_count(ids, 10) == 3);  // 3 windows of 10 + 1 fit in 35
  const Batch b = consecutive_windows(ids, 10, 1, 2);
  const auto x = b.inputs[0].to_indices(), y = b.targets.to_indices();
  CHECK(x.front() == 10);
  CHECK(x.back() == 29);
  CHECK(y.back() == 30);
  CHECK_THROWS(consecutive_windows(ids, 10, 2, 2));
  // A context of 0 windows would divide by zero: an error naming the context instead.
  CHECK_THROWS_WITH(consecutive_window_count(ids, 0), Contains("context must be positive"));
  CHECK_THROWS_WITH(consecutive_windows(ids, 0, 0, 1), Contains("context must be positive"));
}
