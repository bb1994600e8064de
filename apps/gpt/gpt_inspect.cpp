// uwaga-gpt sample, attention, explore and tokenize: look at what a model does with a prompt,
// and at the tokens it reads.
#include <cxxopts.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "apps/common/attention_explorer.h"
#include "apps/common/printable_text.h"
#include "apps/common/token_attention_svg.h"
#include "apps/common/train_command.h"
#include "apps/gpt/gpt_checkpoint.h"
#include "apps/gpt/gpt_commands.h"
#include "apps/gpt/gpt_tokenizer_flag.h"
#include "apps/gpt/gpt_tokens.h"
#include "core/graph.h"
#include "core/shape_ops.h"
#include "data/text/bpe_stream_encoder.h"
#include "nn/sampling.h"
#include "nn/softmax.h"

namespace uwaga::apps {
namespace {

using cxxopts::value;

// The next block of standard input (false at its end), at most kMaxTextBytes in all, the most
// train reads of a text: `tokenize < /dev/zero` would otherwise never end.
bool read_stdin_block(std::string& block, std::uint64_t& total, const char* mode) {
  block.resize(std::size_t{1} << 16);
  const std::size_t n = std::fread(block.data(), 1, block.size(), stdin);
  block.resize(n);
  if (n == 0) {
    if (std::ferror(stdin)) fail(mode, ": cannot read standard input: ", std::strerror(errno));
    return false;
  }
  total += n;
  if (total > kMaxTextBytes)
    fail(mode, ": standard input holds more than ", kMaxTextBytes, " bytes (",
         kMaxTextBytes >> 20, " MiB), the most it reads");
  return true;
}

// The ids of --prompt; fails naming the characters the model never saw.
std::vector<std::int64_t> encode_prompt(const GptRunConfig& run, const std::string& prompt,
                                        const char* mode) {
  if (prompt.empty()) fail(mode, ": --prompt is empty; give at least one character");
  return encode_text(run, prompt, (std::string(mode) + ": --prompt").c_str());
}

// What the model did with a prompt it reads whole: every block's causal attention, and its
// guess at the token (character) after it.
struct ReadPrompt {
  std::vector<std::string> characters;  // T tokens, as labels (' ' as '␣', newline as '↵')
  std::vector<Tensor> maps;             // per block, A (h, T, T)
  std::string next;                     // the most probable next token, as a label
  double next_probability = 0;
  const char* unit = "character";       // or "token"
};

ReadPrompt read_prompt(LoadedGpt& g, const std::string& prompt, const char* mode) {
  const std::vector<std::int64_t> ids = encode_prompt(g.run, prompt, mode);
  const auto T = static_cast<std::int64_t>(ids.size());
  if (T > g.run.model.context)
    fail(mode, ": --prompt has ", T, " ", token_unit(g.run), "s; the model reads at most its "
         "context of ", g.run.model.context);
  NoGradGuard no_grad;
  g.model->keep_attention(true);
  const Tensor logits = g.model->forward(Tensor::from_indices(ids, {1, T}));  // (1, T, V)
  g.model->keep_attention(false);
  ReadPrompt p;
  p.unit = token_unit(g.run);
  p.characters = token_labels(g.run, ids);
  for (const Tensor& A : g.model->attention_maps())  // (1, h, T, T)
    p.maps.push_back(reshape(A, {A.size(1), T, T}));
  const std::vector<double> last = nn::softmax(slice(logits, 1, T - 1, T), 2).to_vector();  // (V)
  const auto best = std::max_element(last.begin(), last.end()) - last.begin();
  std::vector<std::int64_t> then = ids;  // a character the guess completes is shown whole
  then.push_back(best);
  p.next = token_labels(g.run, then).back();
  p.next_probability = last[best];
  return p;
}

// "its guess at the next character: 'e' (34%)".
std::string next_character_line(const ReadPrompt& p) {
  return std::string("its guess at the next ") + p.unit + ": '" + p.next + "' (" +
         std::to_string(static_cast<int>(100 * p.next_probability + 0.5)) + "%)";
}

void prompt_flags(cxxopts::Options& o, const char* out) {
  tokenizer_flag(o);
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-gpt train, or a GPT-2 model.safetensors", value<std::string>())
      ("prompt", "the text the model reads (its characters must occur in the training text; at "
                 "most the model's context)", value<std::string>())
      ("out", out, value<std::string>())
      ("h,help", "show this help");
  add_threads_option(o, "1");
}

}  // namespace

int gpt_sample(int argc, char** argv) {
  cxxopts::Options o("uwaga-gpt sample",
                     "Write text from a prompt, character by character, to stdout.");
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-gpt train, or a GPT-2 model.safetensors", value<std::string>())
      ("prompt", "the text to continue (its characters must occur in the training text)", value<std::string>()->default_value("\n"))
      ("tokens", "tokens (characters, for a character model) to write", value<std::int64_t>()->default_value("500"))
      ("temperature", "sharpen (< 1) or flatten (> 1) the distribution; 0: greedy", value<double>()->default_value("0.8"))
      ("top-k", "draw only from the k most probable characters (default: all)", value<std::int64_t>())
      ("top-p", "draw only from the most probable characters whose probabilities sum to p, in (0, 1]", value<double>()->default_value("1"))
      ("seed", "seed of the draws: the same seed writes the same text", value<std::uint64_t>()->default_value("1"))
      ("no-cache", "recompute the whole window for every character (slow; for comparison)")
      ("stats", "end with one line on stderr: characters written, seconds, characters/s")
      ("h,help", "show this help");
  tokenizer_flag(o);
  add_threads_option(o, "1");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "sample");
  if (!r.count("checkpoint")) fail("sample: --checkpoint FILE is required");
  set_threads_from_option(r, "uwaga-gpt", false);
  const std::int64_t count = r["tokens"].as<std::int64_t>();
  if (count < 1 || count > 1'000'000)  // a book's worth; 10^12 wrote for days
    fail("sample: --tokens must be from 1 to 1,000,000, got ", count);
  nn::SamplingOptions sampling;
  sampling.temperature = r["temperature"].as<double>();
  sampling.top_p = r["top-p"].as<double>();
  if (r.count("top-k")) {
    sampling.top_k = r["top-k"].as<std::int64_t>();
    if (sampling.top_k < 1) fail("sample: --top-k must be at least 1, got ", sampling.top_k);
  }

  LoadedGpt g = load_any_gpt(r["checkpoint"].as<std::string>(), tokenizer_of(r));
  sampling.validate(g.run.model.vocab);
  const std::string prompt = r["prompt"].as<std::string>();
  const std::vector<std::int64_t> prompt_ids = encode_prompt(g.run, prompt, "sample");
  if (static_cast<std::int64_t>(prompt_ids.size()) > g.run.model.context)
    fail("sample: --prompt has ", prompt_ids.size(), " ", token_unit(g.run), "s; the model reads "
         "at most its context of ", g.run.model.context);
  nn::TokenStream stream(*g.model, prompt_ids, sampling, r["seed"].as<std::uint64_t>(),
                         !r.count("no-cache"));
  // fwrite, not fputs: a token may be a NUL byte, which fputs would take for the string's end.
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < count; ++i) {
    const std::string token = decode_ids(g.run, {stream.next()});
    std::fwrite(token.data(), 1, token.size(), stdout);
    std::fflush(stdout);
  }
  std::fputc('\n', stdout);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (r.count("stats"))
    std::fprintf(stderr, "sampled %lld %ss in %.3f s: %.1f %ss/s (%s)\n", (long long)count,
                 token_unit(g.run), seconds, static_cast<double>(count) / seconds, token_unit(g.run),
                 r.count("no-cache") ? "no cache" : "key/value cache");
  return 0;
}

int gpt_attention(int argc, char** argv) {
  cxxopts::Options o("uwaga-gpt attention",
                     "Draw every layer's and head's causal self-attention over a prompt's "
                     "characters (SVG).");
  prompt_flags(o, "the SVG file to write");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "attention");
  if (!r.count("checkpoint")) fail("attention: --checkpoint FILE is required");
  if (!r.count("prompt")) fail("attention: --prompt TEXT is required");
  if (!r.count("out")) fail("attention: --out FILE.svg is required");
  set_threads_from_option(r, "uwaga-gpt", false);
  LoadedGpt g = load_any_gpt(r["checkpoint"].as<std::string>(), tokenizer_of(r));
  const std::string prompt = r["prompt"].as<std::string>();
  const ReadPrompt p = read_prompt(g, prompt, "attention");
  const std::string out = r["out"].as<std::string>();
  save_token_attention_svg(
      {p.characters, p.characters, p.maps},
      "\"" + prompt + "\": " + next_character_line(p),
      "causal self-attention, average over " + std::to_string(p.maps.size()) + " layers x " +
          std::to_string(g.run.model.heads) + " heads (rows: the character attending, columns: "
          "the characters up to it)",
      out);
  std::printf("%s; attention of %zu layers x %lld heads drawn in %s\n",
              next_character_line(p).c_str(), p.maps.size(), (long long)g.run.model.heads,
              out.c_str());
  return 0;
}

int gpt_explore(int argc, char** argv) {
  cxxopts::Options o("uwaga-gpt explore",
                     "Write one HTML page to explore every layer and head of the causal "
                     "self-attention over a prompt's characters (self-contained: open it in any "
                     "browser).");
  prompt_flags(o, "the HTML file to write");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "explore");
  if (!r.count("checkpoint")) fail("explore: --checkpoint FILE is required");
  if (!r.count("prompt")) fail("explore: --prompt TEXT is required");
  if (!r.count("out")) fail("explore: --out FILE.html is required");
  set_threads_from_option(r, "uwaga-gpt", false);
  const std::string checkpoint = r["checkpoint"].as<std::string>();
  LoadedGpt g = load_any_gpt(checkpoint, tokenizer_of(r));
  const std::string prompt = r["prompt"].as<std::string>();
  const ReadPrompt p = read_prompt(g, prompt, "explore");
  const auto& m = g.run.model;

  AttentionExplorer e;
  e.title = "uwaga-gpt: attention over \"" + prompt + "\"";
  e.subtitle = next_character_line(p) + "  ·  " + checkpoint + "  ·  " +
               std::to_string(m.layers) + " layers × " + std::to_string(m.heads) + " heads, " +
               std::to_string(p.characters.size()) + " " + p.unit + "s (␣ a space, ↵ a new line)";
  e.notes = attention_explorer_basics();
  e.notes.push_back(
      "A GPT is a decoder (SEEDS §5): causal self-attention, Q, K and V all from the same "
      "characters, with every query kept from the keys after it — character t sees only "
      "characters 0 … t, so the upper triangle of every map is empty and the first character "
      "can only attend to itself. The last row is what the model read to guess the next "
      "character; heads often specialise: one looks at the previous character, another back to "
      "the start of the word or the line.");
  AttentionFamily self;
  self.id = "self", self.name = "causal self-attention";
  self.about = "Rows (queries): each character of the prompt; columns (keys): the characters up "
               "to it.";
  self.queries = self.keys = p.characters, self.layers = p.maps;
  self.token_view = true;
  e.families.push_back(self);
  const std::string out = r["out"].as<std::string>();
  save_attention_explorer(e, out);
  std::printf("%s; %lld layers x %lld heads written to %s (open it in a browser)\n",
              next_character_line(p).c_str(), (long long)m.layers, (long long)m.heads,
              out.c_str());
  return 0;
}

int gpt_tokenize(int argc, char** argv) {
  cxxopts::Options o("uwaga-gpt tokenize",
                     "Read text on stdin (at most 128 MiB) and print its token ids on one line, "
                     "separated by spaces, as they are settled (with --decode: read ids, print "
                     "their text).");
  o.add_options()
      ("tokenizer", "gpt2 (data/cache/gpt2-tokenizer), a directory with encoder.json and "
                    "vocab.bpe (or vocab.json and merges.txt), or a uwaga-gpt checkpoint",
       value<std::string>())
      ("decode", "read token ids, write the text they spell")
      ("h,help", "show this help");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "tokenize");
  if (!r.count("tokenizer")) fail("tokenize: --tokenizer gpt2|DIR|CHECKPOINT is required");
  const std::string flag = r["tokenizer"].as<std::string>();
  GptRunConfig run;
  if (flag != "gpt2" && std::filesystem::is_regular_file(flag)) {
    run = read_gpt_run_config(flag);
  } else {
    run.tokenizer = "gpt2";
    run.bpe = load_tokenizer_files(flag);
  }
  std::string block;
  std::uint64_t total = 0;
  if (!r.count("decode")) {
    // The ids as they are settled, on one line.
    bool first = true;
    const auto write_ids = [&](const std::vector<std::int64_t>& ids) {
      std::string line;
      for (std::int64_t id : ids) {
        if (!first) line += ' ';
        line += std::to_string(id);
        first = false;
      }
      std::fwrite(line.data(), 1, line.size(), stdout);
    };
    if (reads_characters(run)) {  // each character on its own: any block is a whole
      while (read_stdin_block(block, total, "tokenize"))
        write_ids(encode_text(run, block, "tokenize: the text on stdin"));
    } else {
      BpeStreamEncoder encoder(run.bpe);
      while (read_stdin_block(block, total, "tokenize")) write_ids(encoder.feed(block));
      write_ids(encoder.finish());
    }
    std::fputc('\n', stdout);
    return 0;
  }
  // Ids separated by whitespace; an id has at most 19 digits (2⁶³ − 1), and a longer "word" is
  // none (< /dev/zero has no whitespace at all).
  constexpr std::size_t kMaxIdChars = 20;
  const std::int64_t V = reads_characters(run) ? run.vocab.size() : run.bpe.size();
  std::string word;
  std::vector<std::int64_t> ids;
  const auto take_word = [&] {
    std::int64_t id = -1;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (ec != std::errc() || end != word.data() + word.size() || id < 0 || id >= V)
      fail("tokenize --decode: '", printable(word), "' is not a token id from 0 to ", V - 1);
    ids.push_back(id);
    word.clear();
  };
  const auto write_text = [&] {
    const std::string decoded = decode_ids(run, ids);
    std::fwrite(decoded.data(), 1, decoded.size(), stdout);
    ids.clear();
  };
  while (read_stdin_block(block, total, "tokenize --decode")) {
    for (char c : block) {
      if (std::isspace(static_cast<unsigned char>(c))) {
        if (!word.empty()) take_word();
        continue;
      }
      if (word.size() == kMaxIdChars)
        fail("tokenize --decode: '", printable(word), "…' is not a token id from 0 to ", V - 1);
      word.push_back(c);
    }
    write_text();
  }
  if (!word.empty()) take_word();
  write_text();
  return 0;
}

}  // namespace uwaga::apps
