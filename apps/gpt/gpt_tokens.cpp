#include "apps/gpt/gpt_tokens.h"

#include <algorithm>

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

namespace {

std::string token_bytes(const GptRunConfig& run, std::int64_t id) {
  return reads_characters(run) ? std::string(1, run.vocab.character(id)) : run.bpe.token(id);
}

// Whole UTF-8 characters as they are, every other byte (ASCII: a space as ␣, a control character
// as \xNN; a byte of no character: \xNN) as visible_character shows it.
std::string visible_text(const std::string& bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = utf8_character_at(bytes, i);
    if (n > 1) out += bytes.substr(i, n), i += n;
    else out += visible_character(bytes[i]), ++i;
  }
  return out;
}

}  // namespace

std::vector<std::string> token_labels(const GptRunConfig& run,
                                      const std::vector<std::int64_t>& ids) {
  std::string bytes;
  std::vector<std::size_t> begin;  // token k holds bytes [begin[k], begin[k + 1])
  for (std::int64_t id : ids) begin.push_back(bytes.size()), bytes += token_bytes(run, id);
  begin.push_back(bytes.size());
  // The first byte of the UTF-8 character each byte belongs to (itself when it is in none).
  std::vector<std::size_t> start(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = std::max<std::size_t>(1, utf8_character_at(bytes, i));
    for (std::size_t k = i; k < i + n; ++k) start[k] = i;
    i += n;
  }
  std::vector<std::string> labels;
  for (std::size_t k = 0; k + 1 < begin.size(); ++k) {
    const std::size_t b = begin[k], e = begin[k + 1];
    if (b == e) {
      labels.emplace_back();
      continue;
    }
    // Out to the whole characters at either end; "…" marks a side where the token holds only
    // part of one (its other bytes are the neighbouring tokens').
    const std::size_t from = start[b];
    std::size_t to = e;
    while (to < bytes.size() && start[to] == start[e - 1]) ++to;
    labels.push_back((from < b ? "\xE2\x80\xA6" : "") + visible_text(bytes.substr(from, to - from)) +
                     (to > e ? "\xE2\x80\xA6" : ""));
  }
  return labels;
}

std::string token_label(const GptRunConfig& run, std::int64_t id) {
  return token_labels(run, {id}).front();
}

}  // namespace uwaga::apps
