// The byte-level BPE tokenizer: training (minbpe's algorithm on a case small enough to follow by
// hand), the round trip on any bytes, saving and loading, malformed files, and GPT-2's own
// vocabulary against the npm package's reference encoder, run with node.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/text/bpe_tokenizer.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using Catch::Contains;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kGpt2Dir = UWAGA_SOURCE_DIR "/data/cache/gpt2-tokenizer";
const std::string kShakespeare = UWAGA_SOURCE_DIR "/data/cache/tinyshakespeare/input.txt";

bool has_gpt2() { return std::filesystem::exists(kGpt2Dir + "/encoder.json"); }

// The strings GPT-2's tokenizer is checked on: each alternative of the pre-tokenizer pattern,
// and the places byte-level BPE goes wrong when written carelessly.
std::vector<std::string> reference_strings() {
  const std::vector<std::string> base = {
      "Hello world", "Hello, world!", "hello", " hello", "  hello", "HELLO", "The quick brown fox "
      "jumps over the lazy dog.",
      // contractions
      "it's", "we'll", "I'm", "you're", "they've", "she'd", "don't", "IT'S", "'s", "''s", "O'Neil",
      // numbers
      "0", "1234567890", "3.14159", "1,000,000", "2024-01-01", "-12e-3", "0x7fff", "v1.2.3",
      "½ cup", "Ⅻ", "٣٤٥",
      // whitespace
      " ", "  ", "   ", "\t", "\n", "\n\n", "\n\n\n", "a\n", "a\n\n", "\r\n", " \n ", "a  b",
      "a   b", "a \t b", "\ttab", "trailing   ", "   leading", "a\u00a0b", "a\u3000b", "a\u2003b",
      "x\u0085y", "\ufeffbom",
      // code
      "def f(x):\n    return x ** 2\n", "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
      "if (a && b || !c) { x->y = z; }", "#include <stdio.h>", "std::vector<int> v{1, 2, 3};",
      "print(\"hi\")  # comment", "<|endoftext|>", "<|endoftext|>Hello", "SELECT * FROM t;",
      "https://example.com/a?b=c&d=e", "user@example.com", "$100.00", "50%", "C++", "#!/bin/bash",
      // accents and other scripts
      "café", "naïve résumé", "Ångström", "Straße", "Œuvre", "Ελληνικά", "Русский язык",
      "עברית", "العربية", "हिन्दी", "日本語のテキスト", "中文分词测试", "한국어", "ไทย",
      "Ḽơᶉëᶆ ȋṕšᶙṁ", "e\u0301", "ﬁ",
      // emoji and symbols
      "😀", "👋🏽", "👨‍👩‍👧‍👦", "🇵🇱", "I ❤️ NY", "→ ← ↑ ↓", "∑ x² ≤ ∞", "©®™", "…", "—",
      "“quoted”", "‘single’", "«guillemets»", "¿Qué?", "¡Hola!",
      // repetition
      "aaaaaaaaaaaaaaaa", "abababababab", "!!!!!!!!", "........", "--------", "________",
      "==========", "          x", "\n\n\n\n\nx", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
  };
  std::vector<std::string> strings = base;
  // Pairs of them joined by the separators that interact with the pattern.
  const std::vector<std::string> joins = {" ", "", "\n", "  ", "'s ", " 42 "};
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    const std::string& a = base[rng() % base.size()];
    const std::string& b = base[rng() % base.size()];
    strings.push_back(a + joins[rng() % joins.size()] + b);
  }
  return strings;
}

}  // namespace

TEST_CASE("bpe: training merges the most frequent pair, minbpe's example", "[data][bpe]") {
  // "aaabdaaabac" (one piece): aa occurs 4 times; then "ab" and "aa a" both twice: the smaller
  // pair (a, b) first; then (aa, ab).
  const BpeTokenizer tok = BpeTokenizer::train("aaabdaaabac", 3);
  REQUIRE(tok.size() == 259);
  CHECK(tok.merge(0).a == 'a');
  CHECK(tok.merge(0).b == 'a');
  CHECK(tok.merge(1).a == 'a');
  CHECK(tok.merge(1).b == 'b');
  CHECK(tok.merge(2).a == 256);
  CHECK(tok.merge(2).b == 257);
  CHECK(tok.token(258) == "aaab");
  CHECK(tok.encode("aaabdaaabac") == std::vector<std::int64_t>{258, 'd', 258, 'a', 'c'});
  CHECK(tok.decode({258, 'd'}) == "aaabd");
  // Merges never cross pieces: "ab ab" merges inside "ab" and " ab" only.
  const BpeTokenizer two = BpeTokenizer::train("ab ab ab", 10);
  for (std::int64_t k = 0; k < two.merge_count(); ++k) {
    const std::string t = two.token(two.merge(k).merged);
    CHECK((t == "ab" || t == " a" || t == " ab"));
  }
  CHECK(two.merge_count() == 2);  // "ab", then " "+"ab": every piece is one token
  CHECK_THROWS_WITH(BpeTokenizer::train("x", -1), Contains("must be ≥ 0"));
}

TEST_CASE("bpe: decode(encode(x)) is x for any bytes", "[data][bpe]") {
  std::string text;
  if (std::filesystem::exists(kShakespeare)) text = read(kShakespeare).substr(0, 100000);
  else  // without the fetched text: a few hundred varied lines
    for (int i = 0; i < 300; ++i)
      text += "First Citizen " + std::to_string(i) + ":\nBefore we proceed any further, hear me " +
              (i % 3 ? "speak" : "sing") + std::string(i % 4, '!') + ".\n";
  const BpeTokenizer tok = BpeTokenizer::train(text, 300);
  // 256 bytes and a token for each of the 300 merges on tinyshakespeare; fewer merges on the short
  // fallback (training stops when no pair occurs twice).
  if (std::filesystem::exists(kShakespeare)) REQUIRE(tok.size() == 556);
  REQUIRE(tok.size() > 256);
  std::mt19937 rng(1);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes(rng() % 40, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 256);
    if (trial % 2) bytes = text.substr(rng() % 1000, 60) + bytes;  // the text is longer than 1060
    CHECK(tok.decode(tok.encode(bytes)) == bytes);
  }
  // The vocabulary compresses the text it learned from.
  CHECK(tok.encode(text).size() < text.size() / 2);
  const std::int64_t n = tok.size();
  CHECK_THROWS_WITH(tok.decode({1, n}), Contains("token id " + std::to_string(n) +
                                                 " is outside the vocabulary of " +
                                                 std::to_string(n)));
}

TEST_CASE("bpe: save and load, JSON, malformed files", "[data][bpe]") {
  uwaga::testing::TempDir dir("bpe");
  const BpeTokenizer tok = BpeTokenizer::train("the cat sat on the mat; the cat ate the rat", 20);
  tok.save(dir.str());
  const BpeTokenizer loaded = BpeTokenizer::load(dir.str());
  CHECK(loaded == tok);
  CHECK(loaded.merge_count() == tok.merge_count());
  CHECK(loaded.encode("the cat\n\xff") == tok.encode("the cat\n\xff"));
  const BpeTokenizer restored = BpeTokenizer::from_json(tok.to_json());
  CHECK(restored == tok);
  CHECK(restored.encode("the rat") == tok.encode("the rat"));

  // Hugging Face's names for the same two files.
  uwaga::testing::TempDir hf("bpe-hf");
  std::filesystem::copy_file(dir.file("encoder.json"), hf.file("vocab.json"));
  write(hf.file("merges.txt"), read(dir.file("vocab.bpe")));
  CHECK(BpeTokenizer::load(hf.str()) == tok);

  // Malformed: each error names the file (and the line).
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.file("nowhere")), Contains("nowhere' does not exist"));
  const std::string merges = read(dir.file("vocab.bpe"));
  write(dir.file("vocab.bpe"), merges + "t h e\n");
  const std::string bad_line = "vocab.bpe' line " + std::to_string(tok.merge_count() + 2);
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()),
                    Contains(bad_line + ": expected two tokens separated by one space"));
  write(dir.file("vocab.bpe"), merges + "Ġx Ġy\n");
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()), Contains("is not in the vocabulary"));
  write(dir.file("vocab.bpe"), merges);
  write(dir.file("encoder.json"), "{\"a\": 0, \"b\": 7}");
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()), Contains("encoder.json': the token \"b\" has the id 7"));
  write(dir.file("encoder.json"), "[1, 2]");
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()), Contains("should be a JSON object"));
  write(dir.file("encoder.json"), "{\"a\": 0}");
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()), Contains("lacks the one-byte token"));
  CHECK_THROWS_WITH(BpeTokenizer::from_json("{\"merges\": [1, 999]}"),
                    Contains("names the token 999"));
  CHECK_THROWS_WITH(BpeTokenizer::from_json("{\"merges\": [1, 2, 1, 2]}"), Contains("listed twice"));
  // A trained vocabulary has no special tokens and keeps the short JSON form.
  CHECK(tok.special_ids().empty());
  CHECK(tok.encode_with_special_tokens("the cat") == tok.encode("the cat"));
  CHECK(!nlohmann::json::parse(tok.to_json()).contains("tokens"));
  // The long form ("tokens"): a merge must make a token in the list; a token is a string.
  nlohmann::json bytes_only = nlohmann::json::array();
  for (const std::string& t : bytes_to_unicode()) bytes_only.push_back(t);
  nlohmann::json listed{{"tokens", bytes_only}, {"merges", {1, 2}}};
  CHECK_THROWS_WITH(BpeTokenizer::from_json(listed.dump()), Contains("is not in the vocabulary"));
  listed["tokens"].push_back(bytes_to_unicode()[1] + bytes_to_unicode()[2]);
  listed["tokens"].push_back("<|end|>");
  const BpeTokenizer own = BpeTokenizer::from_json(listed.dump());
  CHECK(own.size() == 258);
  CHECK(own.special_ids() == std::vector<std::int64_t>{257});
  CHECK(BpeTokenizer::from_json(own.to_json()) == own);
  CHECK(own.encode_with_special_tokens("x<|end|>") == std::vector<std::int64_t>{'x', 257});
  listed["tokens"][3] = 5;
  CHECK_THROWS_WITH(BpeTokenizer::from_json(listed.dump()), Contains("a token should be a string"));
  CHECK_THROWS_WITH(BpeTokenizer::load("").size(), Contains("does not exist"));
}

TEST_CASE("bpe: GPT-2's vocabulary", "[data][bpe]") {
  if (!has_gpt2()) {
    WARN("skipped: " << kGpt2Dir << " not fetched (run data/fetch.sh gpt2-tokenizer)");
    return;
  }
  const BpeTokenizer gpt2 = BpeTokenizer::load(kGpt2Dir);
  CHECK(gpt2.size() == 50257);
  CHECK(gpt2.merge_count() == 50000);
  CHECK(gpt2.token(50256) == "<|endoftext|>");
  CHECK(gpt2.encode("Hello world") == std::vector<std::int64_t>{15496, 995});
  CHECK(gpt2.encode("<|endoftext|>").size() > 1);  // spelled out, not the special token
  CHECK(gpt2.decode({15496, 995, 50256}) == "Hello world<|endoftext|>");
  // Special tokens: only <|endoftext|>; encode_with_special_tokens turns its name into it and
  // encodes the text between as encode does.
  CHECK(gpt2.special_ids() == std::vector<std::int64_t>{50256});
  CHECK(gpt2.encode_with_special_tokens("<|endoftext|>") == std::vector<std::int64_t>{50256});
  CHECK(gpt2.encode_with_special_tokens("Hello<|endoftext|>Hello world<|endoftext|>") ==
        std::vector<std::int64_t>{15496, 50256, 15496, 995, 50256});
  CHECK(gpt2.encode_with_special_tokens("") == std::vector<std::int64_t>{});
  CHECK(gpt2.encode_with_special_tokens("a <|endoftext") == gpt2.encode("a <|endoftext"));
  // In a run configuration: every token's spelling and the merges, rebuilt whole.
  const std::string json = gpt2.to_json();
  CHECK(nlohmann::json::parse(json).contains("tokens"));
  const BpeTokenizer rebuilt = BpeTokenizer::from_json(json);
  CHECK(rebuilt == gpt2);
  CHECK(rebuilt.merge_count() == 50000);
  CHECK(rebuilt.encode("naïve 中文 it's") == gpt2.encode("naïve 中文 it's"));
  // A saved copy loads as the same vocabulary, with the same merges.
  uwaga::testing::TempDir dir("gpt2");
  gpt2.save(dir.str());
  const BpeTokenizer again = BpeTokenizer::load(dir.str());
  CHECK(again == gpt2);
  CHECK(again.encode("naïve 中文 it's") == gpt2.encode("naïve 中文 it's"));
}

TEST_CASE("bpe: GPT-2's token ids equal the npm reference encoder's", "[data][bpe][node]") {
  if (!has_gpt2() || !std::filesystem::exists(kGpt2Dir + "/Encoder.js")) {
    WARN("skipped: " << kGpt2Dir << " not fetched (run data/fetch.sh gpt2-tokenizer)");
    return;
  }
  if (std::system("node --version > /dev/null 2>&1") != 0) {
    WARN("skipped: node is not installed (apt-get install nodejs), so the reference encoder "
         "cannot run");
    return;
  }
  std::vector<std::string> strings = reference_strings();
  const bool shakespeare = std::filesystem::exists(kShakespeare);
  if (shakespeare) strings.push_back(read(kShakespeare));
  else WARN("tinyshakespeare not fetched: checking the short strings only");

  uwaga::testing::TempDir dir("gpt2-node");
  write(dir.file("strings.json"), nlohmann::json(strings).dump());
  const std::string command = "node " UWAGA_SOURCE_DIR "/tests/data/gpt2_reference_encode.js '" +
                              kGpt2Dir + "' '" + dir.file("strings.json") + "' '" +
                              dir.file("ids.json") + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  const nlohmann::json expected = nlohmann::json::parse(read(dir.file("ids.json")));
  REQUIRE(expected.size() == strings.size());

  const BpeTokenizer gpt2 = BpeTokenizer::load(kGpt2Dir);
  std::size_t agree = 0;
  for (std::size_t i = 0; i < strings.size(); ++i) {
    const std::vector<std::int64_t> ids = gpt2.encode(strings[i]);
    const auto want = expected[i].get<std::vector<std::int64_t>>();
    if (ids == want) {
      ++agree;
    } else {
      std::size_t first = 0;
      while (first < ids.size() && first < want.size() && ids[first] == want[first]) ++first;
      FAIL_CHECK("string " << i << " (" << strings[i].substr(0, 60) << "): ids differ from token "
                           << first << " on (" << ids.size() << " vs " << want.size() << ")");
    }
    CHECK(gpt2.decode(ids) == strings[i]);
  }
  CHECK(agree == strings.size());
  if (shakespeare) CHECK(expected.back().size() == 338025);  // tinyshakespeare's GPT-2 tokens

  // Text that is not UTF-8 cannot reach the JavaScript encoder (its strings are UTF-16); those
  // bytes are symbols to the pre-tokenizer, one token each when GPT-2 has no merge for them.
  for (const std::string bytes : {"\xff", "ab\xfe\xff cd", "\xc3(", "\xe2\x82\n", "caf\xe9"}) {
    CHECK(gpt2.decode(gpt2.encode(bytes)) == bytes);
  }
  CHECK(gpt2.encode("\xff\xfe").size() == 2);
}

namespace {

// Random bytes of `alphabet`, `n` of them: few symbols, so that merges chain into long tokens.
std::string random_word(std::mt19937& rng, const std::string& alphabet, std::size_t n) {
  std::string s(n, ' ');
  for (char& c : s) c = alphabet[rng() % alphabet.size()];
  return s;
}

// encode_piece (the heap) against encode_piece_reference (the loop as the algorithm states it) on
// `strings`, each taken as one piece.
void check_against_reference(const BpeTokenizer& tok, const std::vector<std::string>& strings) {
  std::size_t agree = 0;
  for (const std::string& s : strings) {
    const std::vector<std::int64_t> fast = tok.encode_piece(s), slow = tok.encode_piece_reference(s);
    if (fast == slow) ++agree;
    else FAIL_CHECK("\"" << s.substr(0, 60) << "\" (" << s.size() << " bytes): " << fast.size()
                         << " tokens, the reference " << slow.size());
  }
  CHECK(agree == strings.size());
}

}  // namespace

TEST_CASE("bpe: encode_piece (a heap of pairs) gives the reference loop's ids", "[data][bpe]") {
  std::string text;
  if (std::filesystem::exists(kShakespeare)) text = read(kShakespeare).substr(0, 200000);
  else
    for (int i = 0; i < 300; ++i)
      text += "First Citizen " + std::to_string(i) + ":\nBefore we proceed any further, hear me.\n";
  const BpeTokenizer trained = BpeTokenizer::train(text, 400);
  std::mt19937 rng(11);
  std::vector<std::string> strings = {"", "a", "aa", "aaa", "aaaa", "aaaaaaaaaaaaaaaaa", " the the"};
  for (int i = 0; i < 300; ++i) {
    strings.push_back(random_word(rng, "eths oa\nr", rng() % 80));
    strings.push_back(text.substr(rng() % (text.size() - 400), rng() % 400));  // across pieces
    std::string bytes(rng() % 30, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 256);
    strings.push_back(bytes);
  }
  strings.push_back(random_word(rng, "eths oa", 5000));
  check_against_reference(trained, strings);

  // The same merges ranked in a shuffled order: a merge may now need a token that a later merge
  // makes, and one round can make a pair of lower rank than its own, which must wait for the
  // next round, as the reference's pass over the piece leaves it.
  nlohmann::json j = nlohmann::json::parse(trained.to_json());
  std::vector<std::string> spellings;
  for (std::int64_t id = 0; id < trained.size(); ++id) {
    std::string printable;
    for (unsigned char c : trained.token(id)) printable += bytes_to_unicode()[c];
    spellings.push_back(printable);
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> merges;
  for (std::int64_t k = 0; k < trained.merge_count(); ++k)
    merges.emplace_back(trained.merge(k).a, trained.merge(k).b);
  std::shuffle(merges.begin(), merges.end(), rng);
  nlohmann::json flat = nlohmann::json::array();
  for (auto [a, b] : merges) flat.push_back(a), flat.push_back(b);
  const BpeTokenizer shuffled =
      BpeTokenizer::from_json(nlohmann::json{{"tokens", spellings}, {"merges", flat}}.dump());
  REQUIRE(shuffled.merge_count() == trained.merge_count());
  check_against_reference(shuffled, strings);

  if (!has_gpt2()) {
    WARN("GPT-2's vocabulary not fetched (data/fetch.sh gpt2-tokenizer): trained ones only");
    return;
  }
  const BpeTokenizer gpt2 = BpeTokenizer::load(kGpt2Dir);
  std::vector<std::string> gpt2_strings = reference_strings();
  for (int i = 0; i < 200; ++i)
    gpt2_strings.push_back(random_word(rng, "abcdefghijklmnopqrstuvwxyz", rng() % 300));
  gpt2_strings.push_back(random_word(rng, "abcdefghijklmnopqrstuvwxyz", 20000));
  gpt2_strings.push_back(std::string(5000, 'a'));
  check_against_reference(gpt2, gpt2_strings);
}

TEST_CASE("bpe: load refuses special files, bare CR line ends and an empty merges file",
          "[data][bpe]") {
  uwaga::testing::TempDir dir("bpe-files");
  const BpeTokenizer tok = BpeTokenizer::train("the cat sat on the mat; the cat ate the rat", 20);
  tok.save(dir.str());
  const std::string encoder = read(dir.file("encoder.json")), merges = read(dir.file("vocab.bpe"));
  const std::string vocab_bpe = dir.file("vocab.bpe"), encoder_json = dir.file("encoder.json");
  auto restore = [&] {
    std::filesystem::remove_all(vocab_bpe);
    std::filesystem::remove_all(encoder_json);
    write(vocab_bpe, merges);
    write(encoder_json, encoder);
  };

  // A FIFO would block, /dev/zero never end, a directory read as empty (no merges, exit 0).
  std::filesystem::remove(vocab_bpe);
  std::filesystem::create_directory(vocab_bpe);
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()),
                    Contains("the tokenizer file '" + vocab_bpe + "': is a directory"));
  restore();
  std::filesystem::remove(encoder_json);
  REQUIRE(::mkfifo(encoder_json.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()),
                    Contains("'" + encoder_json + "': is a FIFO (named pipe), not a regular file"));
  restore();
  std::filesystem::remove(vocab_bpe);
  std::filesystem::create_symlink("/dev/zero", vocab_bpe);
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()), Contains("is a character device"));
  restore();

  // Lines ended by CR alone read as one line, the "#version" line: a tokenizer without merges.
  std::string cr = merges;
  std::replace(cr.begin(), cr.end(), '\n', '\r');
  write(vocab_bpe, cr);
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()),
                    Contains("vocab.bpe' line 1: a carriage return (\\r) inside the line"));
  write(vocab_bpe, "");
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()), Contains("lists no merges, but"));
  // CR LF line ends are fine.
  std::string crlf;
  for (char c : merges) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  write(vocab_bpe, crlf);
  CHECK(BpeTokenizer::load(dir.str()) == tok);

  // A token with a NUL byte is shown escaped, the message whole after it; an empty token is none.
  nlohmann::json j = nlohmann::json::parse(encoder);
  const std::size_t next_id = j.size();
  j[std::string("a\0b", 3)] = next_id;
  write(encoder_json, j.dump());
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()),
                    Contains("the token \"a\\x00b\" holds a character that stands for no byte"));
  nlohmann::json e = nlohmann::json::parse(encoder);
  e[""] = next_id;
  write(encoder_json, e.dump());
  write(vocab_bpe, merges);
  CHECK_THROWS_WITH(BpeTokenizer::load(dir.str()), Contains("is empty"));
}
