#pragma once
// What a uwaga-gpt model reads: text as token ids and back, by the run's tokenizer —
//   "char"   one token per character (byte) of the training text's alphabet (data/text/char_corpus.h):
//            the character presets
//   "bpe:N"  a byte-level BPE of N merges learned from the training text (data/text/bpe_tokenizer.h):
//            uwaga-gpt train --tokenizer bpe:N
//   "gpt2"   GPT-2's 50,257 tokens, for its Hugging Face checkpoints
#include <cstdint>
#include <string>
#include <vector>

#include "apps/gpt/gpt_run_config.h"

namespace uwaga::apps {

bool reads_characters(const GptRunConfig& run);  // "char"
const char* token_unit(const GptRunConfig& run);  // "character" or "token"

// The ids of `text`; with characters, fails (naming `what`) on one the model never saw.
std::vector<std::int64_t> encode_text(const GptRunConfig& run, const std::string& text,
                                      const char* what);
std::string decode_ids(const GptRunConfig& run, const std::vector<std::int64_t>& ids);
// A token as a picture's label: its text, a space shown as ␣ and a new line as ↵.
std::string token_label(const GptRunConfig& run, std::int64_t id);

}  // namespace uwaga::apps
