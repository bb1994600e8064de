// uwaga-translate translate, explore and vocab: look at what a trained translator does with single
// sentences, and which words it knows.
#include <cxxopts.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "apps/common/attention_explorer.h"
#include "apps/common/command_line.h"
#include "apps/common/printable_text.h"
#include "apps/common/training_flags.h"
#include "apps/translate/attention_heatmap.h"
#include "apps/translate/translate_checkpoint.h"
#include "apps/translate/translate_commands.h"
#include "apps/translate/translation_attention.h"
#include "data/translation/translation_batches.h"
#include "nn/decoding.h"

namespace uwaga::apps {
namespace {

using cxxopts::value;

// A sentence on a line of stdin is short: a longer "line" is no text of sentences (< /dev/zero
// has no newline at all, and getline would grow the line until memory ran out).
constexpr std::size_t kMaxLineBytes = 1 << 16;

// The next line of `in` without its end, at most kMaxLineBytes long; false at the end of input.
bool read_sentence_line(std::istream& in, std::string& line) {
  line.clear();
  std::istream::int_type c;
  while ((c = in.get()) != std::istream::traits_type::eof()) {
    if (c == '\n') return true;
    if (line.size() == kMaxLineBytes)
      fail("translate: a line of standard input is longer than ", kMaxLineBytes,
           " bytes; give one sentence per line");
    line.push_back(static_cast<char>(c));
  }
  return !line.empty();
}

// `word` followed by spaces up to `width` letters (UTF-8 letters count once: "está" is 4).
std::string padded(const std::string& word, std::size_t width) {
  std::size_t letters = 0;
  for (unsigned char c : word) letters += (c & 0xC0) != 0x80;
  return word + std::string(letters < width ? width - letters : 0, ' ');
}

std::string words_of(const std::vector<std::int64_t>& ids, const Vocabulary& vocab) {
  std::string s;
  for (std::int64_t id : ids) s += (s.empty() ? "" : " ") + vocab.word(id);
  return s;
}

// Greedy decoding or beam search from --beam (`mode` names the mode in the error).
nn::DecodingOptions decoding_options(const cxxopts::ParseResult& r, const char* mode) {
  nn::DecodingOptions decoding;
  decoding.bos_id = Vocabulary::kBos;
  decoding.eos_id = Vocabulary::kEos;
  decoding.beam = r["beam"].as<std::int64_t>();
  if (decoding.beam < 1) fail(mode, ": --beam must be at least 1, got ", decoding.beam);
  return decoding;
}

nn::Hypothesis decode(nn::Seq2SeqTransformer& model, const std::vector<std::int64_t>& source,
                      const nn::DecodingOptions& decoding) {
  return decoding.beam == 1 ? nn::greedy_decode(model, {source}, decoding)[0]
                            : nn::beam_search(model, source, decoding);
}

void warn_unknown_words(const std::vector<std::string>& unknown) {
  for (const auto& w : unknown)
    std::fprintf(stderr, "uwaga-translate: '%s' is not in the English vocabulary; it is read "
                 "as <unk>\n", printable(w).c_str());
}

// After the warnings, the sentence as read with the unknown words [marked], and where the words
// the model knows are listed; for a sentence with an apostrophe, what the corpus writes instead.
void explain_unknown_words(const std::string& line, const std::vector<std::int64_t>& source,
                           const std::vector<std::string>& unknown, const Vocabulary& en,
                           const std::string& checkpoint) {
  if (unknown.empty()) return;
  std::string marked;
  std::size_t next_unknown = 0;
  for (std::size_t k = 0; k + 1 < source.size(); ++k)
    marked += (k ? " " : "") + (source[k] == Vocabulary::kUnk ? "[" + unknown[next_unknown++] + "]"
                                                              : en.word(source[k]));
  std::fprintf(stderr, "uwaga-translate: read as: %s  (%s vocab --checkpoint %s lists the "
               "words it knows)\n", printable(marked).c_str(),
               program_as_typed("uwaga-translate").c_str(), shell_quoted(checkpoint).c_str());
  // "don't" splits at its apostrophe into "don" and "t", both unknown, and the negation is
  // lost without a word about it: say what the corpus writes instead.
  const bool apostrophe = line.find('\'') != std::string::npos ||
                          line.find("\xE2\x80\x99") != std::string::npos;  // ' or ’
  if (apostrophe)
    std::fprintf(stderr, "uwaga-translate: the corpus has no contractions; write them out "
                 "(\"do not\", \"does not\", \"we are\", \"i am\")\n");
}

// A sentence longer than the model's max_length keeps its first words (and its EOS).
void fit_to_model(std::vector<std::int64_t>& source, std::int64_t max_length) {
  const auto limit = static_cast<std::size_t>(max_length);
  if (source.size() <= limit) return;
  std::fprintf(stderr, "uwaga-translate: a sentence of %zu words is longer than the model "
               "takes; only its first %zu words are translated\n", source.size() - 1, limit - 1);
  source.resize(limit - 1);
  source.push_back(Vocabulary::kEos);
}

// translate --attention: the SVG of one translation's cross-attention, and on stderr the source
// word each produced word attends to most.
void draw_cross_attention(LoadedTranslator& t, const std::string& line,
                          const std::vector<std::int64_t>& source, const nn::Hypothesis& h,
                          const std::string& path) {
  const CrossAttention a = translation_attention(*t.model, t.run, source, h).cross_attention();
  const std::string title =
      "\"" + printable(line) + "\" -> \"" + words_of(h.tokens, t.run.tgt_vocab) + "\"";
  save_attention_svg(a, title, path);
  const std::vector<std::int64_t> strongest = a.strongest_source();
  const std::vector<double> mean = a.average();
  std::fprintf(stderr, "cross-attention (average over layers and heads) written to %s:\n",
               path.c_str());
  for (std::size_t k = 0; k < a.produced.size(); ++k)
    std::fprintf(stderr, "  %s attends most to %s (%.2f)\n", padded(a.produced[k], 14).c_str(),
                 a.source[strongest[k]].c_str(), mean[k * a.source.size() + strongest[k]]);
}

// explore's page: the three families of one translation's attention, with what they mean.
AttentionExplorer translation_explorer(const LoadedTranslator& t, const std::string& checkpoint,
                                       const std::string& sentence, const nn::Hypothesis& h,
                                       const TranslationAttention& a,
                                       const std::string& translation) {
  const auto& m = t.run.model;
  AttentionExplorer e;
  e.title = "uwaga-translate: \"" + sentence + "\" -> \"" + translation + "\"";
  e.subtitle = checkpoint + "  ·  encoder " + std::to_string(m.encoder_layers) + " + decoder " +
               std::to_string(m.decoder_layers) + " layers × " + std::to_string(m.heads) +
               " heads" + (h.finished ? "" : "  ·  the translation reached the length bound");
  e.notes = attention_explorer_basics();
  e.notes.push_back(
      "Cross-attention is the case X ≠ X′ (SEEDS §3): the queries come from the decoder, one per "
      "Spanish word it produces, the keys and values from the encoder's output over the English "
      "sentence. Producing \"estamos\" from \"we are eating bread\" the model should look at "
      "\"we are\", and at \"bread\" for \"pan\" (SEEDS §1) — nobody told it to; it learned where "
      "to look. Row t is decoder position t, which reads the word before (<bos> first) and "
      "predicts the word it is labelled with.");
  e.notes.push_back(
      "The decoder's self-attention is masked (SEEDS §5): position t may look only at positions "
      "0 … t, the words already written, so the upper triangle of its maps is empty. The "
      "encoder's self-attention sees the whole English sentence in both directions.");
  AttentionFamily cross;
  cross.id = "cross", cross.name = "cross-attention";
  cross.about = "Rows (queries): the Spanish words produced, each at the decoder position that "
                "predicted it; columns (keys): the English words and the <eos> the encoder reads.";
  cross.queries = a.produced, cross.keys = a.source, cross.layers = a.cross;
  cross.token_view = true;
  AttentionFamily encoder;
  encoder.id = "encoder", encoder.name = "encoder self-attention";
  encoder.about = "Every English word (row) over every English word (column), in both directions.";
  encoder.queries = encoder.keys = a.source, encoder.layers = a.encoder;
  encoder.token_view = true;
  AttentionFamily decoder;
  decoder.id = "decoder", decoder.name = "decoder self-attention (causal)";
  decoder.about = "Each decoder position (row, labelled by the word it reads) over the positions "
                  "up to it (columns): the Spanish written so far.";
  decoder.queries = decoder.keys = a.decoder_input, decoder.layers = a.decoder_self;
  decoder.token_view = true;
  e.families = {cross, encoder, decoder};
  return e;
}

// vocab: the words in alphabetical order, wrapped at 80 columns; the four special tokens apart.
void print_words(const char* name, const Vocabulary& vocab) {
  std::vector<std::string> words(vocab.words().begin() + 4, vocab.words().end());
  std::sort(words.begin(), words.end());
  std::printf("%s: %zu words (and <pad> <bos> <eos> <unk>)\n", name, words.size());
  std::string line;  // printed after two spaces
  for (const std::string& w : words) {
    if (!line.empty() && line.size() + 1 + w.size() > 78) {
      std::printf("  %s\n", line.c_str());
      line.clear();
    }
    if (!line.empty()) line.push_back(' ');
    line.append(w);
  }
  if (!line.empty()) std::printf("  %s\n", line.c_str());
}

}  // namespace

int translate_translate(int argc, char** argv) {
  cxxopts::Options o("uwaga-translate translate",
                     "Translate English sentences to Spanish, one per line on stdout.");
  o.positional_help("[SENTENCE ...]  (none: read stdin, one sentence per line)");
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-translate train", value<std::string>())
      ("beam", "beam width (1: greedy)", value<std::int64_t>()->default_value("1"))
      ("length-penalty", "beam search ranks finished sentences by score / length^α: this α (0: total log-probability, 1: per word)", value<double>()->default_value("0"))
      ("max-length", "most words produced per sentence, EOS included (0: twice the source's, plus 10); at most the model's max_length", value<std::int64_t>()->default_value("0"))
      ("attention", "draw the cross-attention of the (first) translation to this SVG file", value<std::string>())
      ("allow-unknown", "exit with status 0 even when a sentence has words the vocabulary lacks (read as <unk>; without it: status 3)")
      ("sentences", "sentences to translate", value<std::vector<std::string>>())
      ("h,help", "show this help");
  add_threads_option(o, "1");
  o.parse_positional({"sentences"});
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "translate", "sentences");
  if (!r.count("checkpoint")) fail("translate: --checkpoint FILE is required");
  set_threads_from_option(r, "uwaga-translate", false);
  nn::DecodingOptions decoding = decoding_options(r, "translate");
  decoding.length_penalty = r["length-penalty"].as<double>();
  if (!(decoding.length_penalty >= 0) || !std::isfinite(decoding.length_penalty))
    fail("translate: --length-penalty must be a finite number >= 0, got ",
         decoding.length_penalty);
  decoding.max_length = r["max-length"].as<std::int64_t>();
  if (decoding.max_length < 0)
    fail("translate: --max-length must be >= 0 (0: automatic), got ", decoding.max_length);
  const std::string attention_path = r.count("attention") ? r["attention"].as<std::string>() : "";
  // An empty path would read as "no picture": the run would end well having drawn nothing.
  if (r.count("attention") && attention_path.empty())
    fail("translate: --attention is empty; give the SVG file to draw the attention to");

  const std::string checkpoint = r["checkpoint"].as<std::string>();
  LoadedTranslator t = load_translator(checkpoint);
  std::vector<std::string> sentences;
  const bool from_stdin = !r.count("sentences");
  if (!from_stdin) sentences = positional_arguments(r, "sentences");
  bool attention_done = false, any_unknown = false;
  std::string line;
  for (std::size_t i = 0;; ++i) {
    if (from_stdin) {
      if (!read_sentence_line(std::cin, line)) break;
      if (!line.empty() && line.back() == '\r') line.pop_back();  // a CRLF line end
    } else {
      if (i >= sentences.size()) break;
      line = sentences[i];
    }
    std::vector<std::string> unknown;
    std::vector<std::int64_t> source = encode_source(line, t.run.src_vocab, &unknown);
    warn_unknown_words(unknown);
    explain_unknown_words(line, source, unknown, t.run.src_vocab, checkpoint);
    any_unknown = any_unknown || !unknown.empty();
    if (source.size() == 1) {  // no words: nothing to translate
      std::printf("\n");
      std::fflush(stdout);
      continue;
    }
    fit_to_model(source, t.run.model.max_length);
    const nn::Hypothesis h = decode(*t.model, source, decoding);
    if (!h.finished)
      std::fprintf(stderr, "uwaga-translate: the translation of '%s' reached the length bound "
                   "without ending\n", printable(line).c_str());
    std::printf("%s\n", words_of(h.tokens, t.run.tgt_vocab).c_str());
    std::fflush(stdout);
    if (!attention_path.empty() && !attention_done) {
      attention_done = true;
      draw_cross_attention(t, line, source, h, attention_path);
    }
  }
  if (!attention_path.empty() && !attention_done)
    fail("translate: --attention: there was no sentence to draw");
  if (any_unknown && !r.count("allow-unknown")) {
    std::fprintf(stderr, "uwaga-translate: some words were not in the vocabulary (marked [like "
                 "this] above); exit status 3 (--allow-unknown: 0)\n");
    return kUnknownWordsStatus;
  }
  return 0;
}

int translate_explore(int argc, char** argv) {
  cxxopts::Options o("uwaga-translate explore",
                     "Translate one sentence and write one HTML page to explore every layer and "
                     "head of its attention: cross-attention, the encoder's and the decoder's "
                     "self-attention (self-contained: open it in any browser).");
  o.positional_help("SENTENCE");
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-translate train", value<std::string>())
      ("out", "the HTML file to write", value<std::string>())
      ("beam", "beam width (1: greedy)", value<std::int64_t>()->default_value("1"))
      ("sentence", "the English sentence", value<std::vector<std::string>>())
      ("h,help", "show this help");
  add_threads_option(o, "1");
  o.parse_positional({"sentence"});
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "explore", "sentence");
  if (!r.count("checkpoint")) fail("explore: --checkpoint FILE is required");
  if (!r.count("out")) fail("explore: --out FILE.html is required");
  const std::vector<std::string> sentences =
      r.count("sentence") ? positional_arguments(r, "sentence") : std::vector<std::string>{};
  if (sentences.size() != 1)
    fail("explore: give exactly one sentence (in quotes), got ", sentences.size());
  set_threads_from_option(r, "uwaga-translate", false);
  const nn::DecodingOptions decoding = decoding_options(r, "explore");

  const std::string checkpoint = r["checkpoint"].as<std::string>();
  LoadedTranslator t = load_translator(checkpoint);
  std::vector<std::string> unknown;
  std::vector<std::int64_t> source = encode_source(sentences[0], t.run.src_vocab, &unknown);
  warn_unknown_words(unknown);
  if (source.size() == 1) fail("explore: '", printable(sentences[0]), "' has no words");
  if (source.size() > static_cast<std::size_t>(t.run.model.max_length))
    fail("explore: the sentence has ", source.size() - 1, " words; the model takes at most ",
         t.run.model.max_length - 1);
  const nn::Hypothesis h = decode(*t.model, source, decoding);
  const TranslationAttention a = translation_attention(*t.model, t.run, source, h);
  const std::string translation = words_of(h.tokens, t.run.tgt_vocab);
  const std::string out = r["out"].as<std::string>();
  save_attention_explorer(translation_explorer(t, checkpoint, sentences[0], h, a, translation),
                          out);
  std::printf("%s\n", translation.c_str());
  std::fprintf(stderr, "cross-attention, encoder and decoder self-attention written to %s (open "
               "it in a browser)\n", out.c_str());
  return 0;
}

int translate_vocab(int argc, char** argv) {
  cxxopts::Options o("uwaga-translate vocab",
                     "List the words a checkpoint's translator knows, English and Spanish.");
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-translate train", value<std::string>())
      ("language", "en, es or both", value<std::string>()->default_value("both"))
      ("h,help", "show this help");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "vocab");
  if (!r.count("checkpoint")) fail("vocab: --checkpoint FILE is required");
  const std::string language = r["language"].as<std::string>();
  if (language != "en" && language != "es" && language != "both")
    fail("vocab: --language must be en, es or both, got '", language, "'");
  const TranslateRunConfig run = read_translate_run_config(r["checkpoint"].as<std::string>());
  if (language != "es") print_words("English", run.src_vocab);
  if (language == "both") std::printf("\n");
  if (language != "en") print_words("Spanish", run.tgt_vocab);
  return 0;
}

}  // namespace uwaga::apps
