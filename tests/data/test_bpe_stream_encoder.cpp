// Encoding text that arrives in parts (data/text/bpe_stream_encoder.h) gives the ids of encoding
// it whole, wherever the parts are cut: inside a run of whitespace, a contraction, a UTF-8
// character or a special token's name.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "data/text/bpe_stream_encoder.h"
#include "data/text/bpe_tokenizer.h"

using namespace uwaga;

namespace {

const std::string kStreamGpt2Dir = UWAGA_SOURCE_DIR "/data/cache/gpt2-tokenizer";
const std::string kStreamShakespeare = UWAGA_SOURCE_DIR "/data/cache/tinyshakespeare/input.txt";

// `text` fed in parts cut at `cuts` (sorted positions), then finished.
std::vector<std::int64_t> encode_in_parts(const BpeTokenizer& tok, const std::string& text,
                                          const std::vector<std::size_t>& cuts) {
  BpeStreamEncoder encoder(tok);
  std::vector<std::int64_t> ids;
  std::size_t from = 0;
  for (std::size_t cut : cuts) {
    const std::vector<std::int64_t> part = encoder.feed(std::string_view(text).substr(from, cut - from));
    ids.insert(ids.end(), part.begin(), part.end());
    from = cut;
  }
  const std::vector<std::int64_t> part = encoder.feed(std::string_view(text).substr(from));
  ids.insert(ids.end(), part.begin(), part.end());
  const std::vector<std::int64_t> rest = encoder.finish();
  ids.insert(ids.end(), rest.begin(), rest.end());
  return ids;
}

// Texts of the fragments the pre-tokenizer treats each its own way, cut at random places.
void check_random_cuts(const BpeTokenizer& tok, const std::string& special) {
  const std::vector<std::string> fragments = {
      "the", " the", "  ", "   ", "\n", "\n\n", " \n ", "\t", "\r\n", "'s", "'ll", "'", "don't",
      "42", " 7", "!!", "...", "é", "中文", "\u3000", "\u0085", "\u2028", "😀", "\xff", "\xe2\x82",
      special, special.substr(0, 5), "<|", "|>", "a", "Z"};
  std::mt19937 rng(5);
  for (int trial = 0; trial < 400; ++trial) {
    std::string text;
    const int n = static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) text += fragments[rng() % fragments.size()];
    std::vector<std::size_t> cuts;
    const int parts = static_cast<int>(rng() % 12);
    for (int i = 0; i < parts && !text.empty(); ++i) cuts.push_back(rng() % (text.size() + 1));
    if (trial % 4 == 0)  // every byte a part of its own
      for (std::size_t i = 1; i < text.size(); ++i) cuts.push_back(i);
    std::sort(cuts.begin(), cuts.end());
    const std::vector<std::int64_t> whole = tok.encode_with_special_tokens(text);
    const std::vector<std::int64_t> parted = encode_in_parts(tok, text, cuts);
    if (parted != whole) {
      FAIL_CHECK("trial " << trial << ": " << parted.size() << " ids in parts, " << whole.size()
                          << " whole, for " << nlohmann::json(text).dump(
                                 -1, ' ', false, nlohmann::json::error_handler_t::replace));
      return;
    }
  }
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("bpe stream: parts give the ids of the whole text", "[data][bpe]") {
  // A trained vocabulary with a special token of its own.
  const BpeTokenizer trained = BpeTokenizer::train(
      "the cat sat on the mat; the cat ate the rat.\n\n  don't   it's 42 42 中文中文", 60);
  nlohmann::json j = nlohmann::json::parse(trained.to_json());
  std::vector<std::string> spellings;
  for (std::int64_t id = 0; id < trained.size(); ++id) {
    std::string printable;
    for (unsigned char c : trained.token(id)) printable += bytes_to_unicode()[c];
    spellings.push_back(printable);
  }
  spellings.push_back("<|end|>");
  j["tokens"] = spellings;
  const BpeTokenizer with_special = BpeTokenizer::from_json(j.dump());
  REQUIRE(with_special.special_ids().size() == 1);
  check_random_cuts(with_special, "<|end|>");
  check_random_cuts(trained, "<|end|>");

  if (!std::filesystem::exists(kStreamGpt2Dir + "/encoder.json")) {
    WARN("GPT-2's vocabulary not fetched (data/fetch.sh gpt2-tokenizer): a trained one only");
    return;
  }
  const BpeTokenizer gpt2 = BpeTokenizer::load(kStreamGpt2Dir);
  check_random_cuts(gpt2, "<|endoftext|>");
  // A whole text in blocks of 4 kB, as tokenize reads standard input (in 64 kB), holding little.
  if (std::filesystem::exists(kStreamShakespeare)) {
    const std::string text = read_whole(kStreamShakespeare);
    BpeStreamEncoder encoder(gpt2);
    std::vector<std::int64_t> ids;
    std::size_t most_held = 0;
    for (std::size_t at = 0; at < text.size(); at += 4096) {
      const std::vector<std::int64_t> part = encoder.feed(std::string_view(text).substr(at, 4096));
      ids.insert(ids.end(), part.begin(), part.end());
      most_held = std::max(most_held, encoder.held_bytes());
    }
    const std::vector<std::int64_t> rest = encoder.finish();
    ids.insert(ids.end(), rest.begin(), rest.end());
    CHECK(ids == gpt2.encode_with_special_tokens(text));
    CHECK(ids.size() == 338025);
    CHECK(most_held < 2 * 4096 + 64);
  }
}
