#include "data/text/bpe_corpus.h"

#include "core/error.h"

namespace uwaga {
namespace {

std::size_t training_cut(const std::string& text) { return text.size() - text.size() / 10; }

void check_holds_a_window(const std::vector<std::int64_t>& ids, const char* part,
                          const std::string& path, std::int64_t context) {
  if (static_cast<std::int64_t>(ids.size()) < context + 1)
    fail("the ", part, " part of '", path, "' has ", ids.size(),
         " tokens, fewer than one window of --context ", context, " + 1 tokens");
}

}  // namespace

BpeCorpus split_bpe_corpus(const std::string& text, const std::string& path,
                           std::int64_t context, std::int64_t merges) {
  return split_bpe_corpus(text, path, context,
                          BpeTokenizer::train(std::string_view(text).substr(0, training_cut(text)),
                                              merges));
}

BpeCorpus split_bpe_corpus(const std::string& text, const std::string& path,
                           std::int64_t context, const BpeTokenizer& tokenizer) {
  const std::size_t cut = training_cut(text);
  const std::string_view all(text);
  BpeCorpus c{tokenizer, tokenizer.encode_with_special_tokens(all.substr(0, cut)),
              tokenizer.encode_with_special_tokens(all.substr(cut)),
              static_cast<std::int64_t>(cut), static_cast<std::int64_t>(text.size() - cut)};
  check_holds_a_window(c.train, "training (first 90 %)", path, context);
  check_holds_a_window(c.valid, "validation (last 10 %)", path, context);
  return c;
}

}  // namespace uwaga
