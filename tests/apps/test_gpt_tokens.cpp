// uwaga-gpt's tokens as a picture's labels: a UTF-8 character split across tokens is shown whole.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "apps/gpt/gpt_run_config.h"
#include "apps/gpt/gpt_tokens.h"

using namespace uwaga;
using namespace uwaga::apps;

namespace {

// A character run of the smoke preset whose text is `text`, as a checkpoint holds it.
GptRunConfig gpt_char_run(const std::string& text) {
  GptRunConfig run = gpt_preset("smoke");
  run.text = "/data/text.txt";
  run.vocab = CharVocabulary::build(text);
  run.model.vocab = run.vocab.size();
  return run;
}

}  // namespace

// Before: "€uro" read byte by byte was labelled '�', '�', '�', 'u', 'r', 'o'.
TEST_CASE("gpt tokens: a UTF-8 character split across tokens is labelled whole", "[apps][gpt]") {
  const std::string euro = "\xE2\x82\xAC";  // €, three bytes
  const std::string more = "\xE2\x80\xA6";  // …
  GptRunConfig chars = gpt_char_run(euro + "uro x\n");
  const std::vector<std::string> labels = token_labels(chars, chars.vocab.encode(euro + "uro x\n"));
  CHECK(labels == std::vector<std::string>{euro + more, more + euro + more, more + euro, "u", "r",
                                           "o", "\xE2\x90\xA3", "x", "\xE2\x86\xB5"});
  // A byte alone is no character: its value.
  CHECK(token_label(chars, chars.vocab.encode("\xE2")[0]) == "\\xE2");

  // BPE: a token of the first two bytes, then the third.
  GptRunConfig bpe = gpt_char_run("x");
  bpe.tokenizer = "bpe:1";
  bpe.bpe = BpeTokenizer::from_json(R"({"merges": [226, 130]})");  // 0xE2 0x82 -> id 256
  bpe.model.vocab = bpe.bpe.size();
  CHECK(token_labels(bpe, {256, 0xAC, 'u'}) ==
        std::vector<std::string>{euro + more, more + euro, "u"});
  // Whole characters and a byte that starts none.
  CHECK(token_labels(bpe, {0xAC, 'a', 0xE2, 0x82, 0xAC}) ==
        std::vector<std::string>{"\\xAC", "a", euro + more, more + euro + more, more + euro});
}
