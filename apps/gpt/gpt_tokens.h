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
// The tokens of `ids` as a picture's labels: their text, a space shown as ␣ and a new line as ↵.
// A UTF-8 character split across tokens (a byte each, with the character tokenizer) is shown whole
// on each of them, with "…" on the side where it goes on in the next token or came from the last:
// "€uro" read byte by byte is "€…", "…€…", "…€", "u", "r", "o" (each byte alone was "�").
std::vector<std::string> token_labels(const GptRunConfig& run,
                                      const std::vector<std::int64_t>& ids);
// One token alone as a label (a byte of no whole character as \xNN).
std::string token_label(const GptRunConfig& run, std::int64_t id);

}  // namespace uwaga::apps
