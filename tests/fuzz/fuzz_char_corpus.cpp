// uwaga-gpt's text and its character vocabulary: the input's first line is a vocabulary as JSON
// (what a checkpoint's config holds), the rest a text read as a corpus file. Accepted inputs must
// keep their promises: ids inside the vocabulary, decode(encode(text)) == text, JSON round trips,
// a 90 / 10 split covering the text, windows whose targets are their inputs shifted by one.
#include <algorithm>
#include <cstdlib>

#include "data/text/char_corpus.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void check_round_trips(const uwaga::CharVocabulary& vocab, const std::string& text) {
  check(uwaga::CharVocabulary::from_json(vocab.to_json()).characters() == vocab.characters());
  const std::vector<std::int64_t> ids = vocab.encode(text);
  for (std::int64_t id : ids) check(id >= 0 && id < vocab.size());
  check(vocab.decode(ids) == text);
}

// Random windows of the training part and consecutive ones of the validation part.
void check_windows(const uwaga::CharCorpus& corpus, std::int64_t T) {
  uwaga::CharWindows windows(corpus.train, 2, T, 1, 7);
  const uwaga::Batch b = windows.batch(0);
  const std::int64_t* x = b.inputs[0].data<std::int64_t>();  // (2, T)
  const std::int64_t* y = b.targets.data<std::int64_t>();    // (2, T)
  for (std::int64_t r = 0; r < 2; ++r)
    for (std::int64_t t = 0; t + 1 < T; ++t) check(y[r * T + t] == x[r * T + t + 1]);
  const std::int64_t count =
      std::min<std::int64_t>(3, uwaga::consecutive_window_count(corpus.valid, T));
  check(count >= 1);
  uwaga::consecutive_windows(corpus.valid, T, 0, count);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string json = input.substr(0, newline);
  const std::string text = newline == std::string::npos ? input : input.substr(newline + 1);
  // The window length from the text's first byte: 1 to 16.
  const std::int64_t T = 1 + (text.empty() ? 0 : static_cast<unsigned char>(text[0]) % 16);

  const std::string& path = uwaga::fuzz::write_input(data, size);
  uwaga::fuzz::expect_error_or_success([&] { check(uwaga::read_text_file(path) == input); });

  // The vocabulary of the text itself encodes all of it.
  const uwaga::CharVocabulary built = uwaga::CharVocabulary::build(text);
  check(built.unknown(text).empty());
  if (!text.empty()) check_round_trips(built, text);

  // A vocabulary from JSON: the text may hold characters outside it (an Error then).
  uwaga::fuzz::expect_error_or_success([&] {
    const uwaga::CharVocabulary vocab = uwaga::CharVocabulary::from_json(json);
    check(vocab.size() >= 1 && vocab.size() <= 256);
    check_round_trips(vocab, text);
  });

  uwaga::fuzz::expect_error_or_success([&] {
    const uwaga::CharCorpus corpus = uwaga::split_char_corpus(text, path, T);
    check(corpus.train.size() + corpus.valid.size() == text.size());
    check(corpus.vocab.decode(corpus.train) + corpus.vocab.decode(corpus.valid) == text);
    check_windows(corpus, T);
  });
  uwaga::fuzz::expect_error_or_success([&] {
    const uwaga::CharCorpus corpus =
        uwaga::split_char_corpus(text, path, T, uwaga::CharVocabulary::from_json(json));
    check_windows(corpus, T);
  });
  return 0;
}
