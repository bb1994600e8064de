#include "apps/gpt/gpt_tokens.h"

#include "apps/common/attention_explorer.h"
#include "apps/common/printable_text.h"
#include "core/error.h"

namespace uwaga::apps {

bool reads_characters(const GptRunConfig& run) { return run.tokenizer == "char"; }

const char* token_unit(const GptRunConfig& run) {
  return reads_characters(run) ? "character" : "token";
}

std::vector<std::int64_t> encode_text(const GptRunConfig& run, const std::string& text,
                                      const char* what) {
  if (!reads_characters(run)) return run.bpe.encode_with_special_tokens(text);
  if (const std::string missing = run.vocab.unknown(text); !missing.empty()) {
    std::string listed;
    for (char c : missing)
      listed += (listed.empty() ? "'" : ", '") + printable(std::string(1, c)) + "'";
    fail(what, " has characters the model never saw in training: ", listed);
  }
  return run.vocab.encode(text);
}

std::string decode_ids(const GptRunConfig& run, const std::vector<std::int64_t>& ids) {
  return reads_characters(run) ? run.vocab.decode(ids) : run.bpe.decode(ids);
}

std::string token_label(const GptRunConfig& run, std::int64_t id) {
  if (reads_characters(run)) return visible_character(run.vocab.character(id));
  std::string label;
  for (char c : run.bpe.token(id)) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') label += visible_character(c);
    else label += c;
  }
  return printable(label);  // a token may be part of a UTF-8 character: shown as �
}

}  // namespace uwaga::apps
