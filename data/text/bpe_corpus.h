#pragma once
// A text for language modelling in byte-pair tokens (data/text/bpe_tokenizer.h): the split of
// CharCorpus (the first 90 % of the bytes train, the last 10 % validate), each part encoded on its
// own with a vocabulary learned from the training part, or given (GPT-2's, a resumed run's). A
// special token's name in the text (GPT-2's <|endoftext|>) is that token
// (BpeTokenizer::encode_with_special_tokens).
#include <cstdint>
#include <string>
#include <vector>

#include "data/text/bpe_tokenizer.h"

namespace uwaga {

struct BpeCorpus {
  BpeTokenizer tokenizer;
  std::vector<std::int64_t> train, valid;  // token ids of the two parts
  std::int64_t train_bytes = 0, valid_bytes = 0;
};

// Learns `merges` merges from the training part of `text` (read from `path`, named in errors).
// Each part must hold one window of `context` + 1 tokens.
BpeCorpus split_bpe_corpus(const std::string& text, const std::string& path,
                           std::int64_t context, std::int64_t merges);
// As above with a given vocabulary.
BpeCorpus split_bpe_corpus(const std::string& text, const std::string& path,
                           std::int64_t context, const BpeTokenizer& tokenizer);

}  // namespace uwaga
