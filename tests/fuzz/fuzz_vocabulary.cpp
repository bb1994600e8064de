// The translator's vocabulary as JSON (what a checkpoint's config holds) and its tokenizer: the
// input's first line is the vocabulary, the rest a sentence to tokenize, encode and decode.
#include <cstdlib>

#include "data/translation/vocabulary.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string json = input.substr(0, newline);
  const std::string sentence = newline == std::string::npos ? input : input.substr(newline + 1);
  uwaga::fuzz::expect_error_or_success([&] { uwaga::tokenize(sentence); });
  uwaga::fuzz::expect_error_or_success([&] {
    const uwaga::Vocabulary vocab = uwaga::Vocabulary::from_json(json);
    if (!(uwaga::Vocabulary::from_json(vocab.to_json()) == vocab)) std::abort();
    const std::vector<std::int64_t> ids = vocab.encode(sentence, true);
    for (std::int64_t id : ids)
      if (id < 0 || id >= vocab.size()) std::abort();
    vocab.decode(ids);
  });
  uwaga::fuzz::expect_error_or_success([&] {
    const uwaga::Vocabulary built = uwaga::Vocabulary::build({sentence});
    if (!(uwaga::Vocabulary::from_json(built.to_json()) == built)) std::abort();
  });
  return 0;
}
