#include "apps/translate/translate_commands.h"

#include <cxxopts.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/common/attention_explorer.h"
#include "apps/common/command_line.h"
#include "apps/common/memory_budget.h"
#include "apps/common/thread_policy.h"
#include "apps/common/printable_text.h"
#include "apps/common/train_command.h"
#include "apps/common/training_flags.h"
#include "apps/common/training_plot.h"
#include "apps/translate/attention_heatmap.h"
#include "apps/translate/translate_checkpoint.h"
#include "apps/translate/translate_training.h"
#include "apps/translate/translation_attention.h"
#include "core/graph.h"
#include "core/shape_ops.h"
#include "core/threads.h"
#include "optim/adam.h"
#include "optim/checkpoint.h"

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

// Applies the model and optimisation flags the user gave on top of a preset.
void apply_overrides(TranslateRunConfig& run, const cxxopts::ParseResult& r) {
  auto set = [&](const char* flag, auto& field) { override_from(r, flag, field); };
  set("dim", run.model.dim);
  set("heads", run.model.heads);
  set("encoder-layers", run.model.encoder_layers);
  set("decoder-layers", run.model.decoder_layers);
  set("mlp-dim", run.model.mlp_dim);
  set("positions", run.model.positions);
  set("dropout", run.model.dropout);
  set("max-length", run.model.max_length);
  override_training_flags(r, run);
  set("eval-size", run.eval_size);
  set("corpus-seed", run.corpus.seed);
  set("train-size", run.corpus.train_size);
  set("valid-size", run.corpus.valid_size);
  set("test-size", run.corpus.test_size);
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

// uwaga-translate's part of `train` (apps/common/train_command.h): an encoder-decoder on the toy
// English -> Spanish corpus.
class TranslateTrain : public TrainProgram {
 public:
  TrainModeText text() const override {
    return {.program = "uwaga-translate",
            .description = "Train an encoder-decoder transformer on the toy English->Spanish "
                           "corpus.",
            .presets = "default or tiny",
            .default_preset = "default",
            .examples = "sentence pairs",
            .seeded = "initialisation, shuffling and dropout",
            .micro_batch = kTranslateMicroBatch,
            .micro_batch_items = "sentence pairs"};
  }

  void add_flags(cxxopts::Options& o) const override {
    o.add_options()
        ("dim", "model width D", value<std::int64_t>())
        ("heads", "attention heads h (must divide D)", value<std::int64_t>())
        ("encoder-layers", "encoder blocks", value<std::int64_t>())
        ("decoder-layers", "decoder blocks", value<std::int64_t>())
        ("mlp-dim", "hidden width of the MLPs", value<std::int64_t>())
        ("positions", "sinusoidal or learned", value<std::string>())
        ("dropout", "dropout on the embeddings, in [0, 1)", value<double>())
        ("max-length", "longest sequence the model takes (positions)", value<std::int64_t>())
        ("eval-size", "validation sentences translated after each epoch (0: all)", value<std::int64_t>())
        ("corpus-seed", "seed of the corpus and its train/valid/test split", value<std::uint64_t>())
        ("train-size", "training sentence pairs", value<std::int64_t>())
        ("valid-size", "validation sentence pairs", value<std::int64_t>())
        ("test-size", "test sentence pairs", value<std::int64_t>());
  }

  RunSettings set_up(const cxxopts::ParseResult& r, const TrainingOutput& output) override {
    run_ = new_or_resumed_run(r, output, read_translate_run_config, translate_preset,
                              apply_overrides);
    run_.model.attention = attention_path(r);
    // The model's fields are checked before the corpus is built (vocabulary sizes come after).
    run_.model.src_vocab = std::max<std::int64_t>(run_.model.src_vocab, 4);
    run_.model.tgt_vocab = std::max<std::int64_t>(run_.model.tgt_vocab, 4);
    run_.validate();
    const nn::Seq2SeqConfig& m = run_.model;
    const double d = static_cast<double>(m.dim);
    const double layers = static_cast<double>(m.encoder_layers + m.decoder_layers);
    nn::Seq2SeqConfig declared = m;  // a new run's vocabularies come with its corpus: the toy
    if (!output.resume)              // corpus has far fewer than 4096 words in each language
      declared.src_vocab = declared.tgt_vocab = 4096;
    check_training_fits({declared_parameter_count<nn::Seq2SeqTransformer>(declared),
                         double(run_.batch_size), double(m.max_length), d, layers,
                         double(m.heads), double(m.mlp_dim)},
                        "--dim, --encoder-layers, --decoder-layers, --mlp-dim or --batch-size");
    corpus_ = generate_translation_corpus(run_.corpus);
    if (!output.resume) build_vocabularies(run_, corpus_);
    return {run_.to_json(), 0};
  }

  void start(optim::TrainerOptions options) override {
    training_ = std::make_unique<TranslateTraining>(run_, corpus_, std::move(options));
  }

  void print_summary(const optim::DataParallelOptions& parallel) override {
    const auto& m = run_.model;
    std::printf("uwaga-translate: %s\n", run_.preset.empty() ? "custom" : run_.preset.c_str());
    std::printf("  model     encoder %lld + decoder %lld blocks, dim %lld, heads %lld, mlp %lld, "
                "%s positions, dropout %g\n",
                (long long)m.encoder_layers, (long long)m.decoder_layers, (long long)m.dim,
                (long long)m.heads, (long long)m.mlp_dim, m.positions.c_str(), m.dropout);
    std::printf("  vocab     %lld English, %lld Spanish words (with PAD, BOS, EOS, UNK)\n",
                (long long)m.src_vocab, (long long)m.tgt_vocab);
    std::printf("  params    %lld\n", (long long)training_->model().num_parameters());
    std::printf("  data      %zu training, %zu validation, %zu test pairs (corpus seed %llu; "
                "valid and test use subject-verb-object triples never seen in training)\n",
                corpus_.train.size(), corpus_.valid.size(), corpus_.test.size(),
                (unsigned long long)run_.corpus.seed);
    std::printf("  optimiser AdamW lr %g (warm-up %lld steps, cosine to %g), weight decay %g, "
                "batch %lld, %lld epochs, label smoothing %g, clip %g, seed %llu\n",
                run_.lr, (long long)training_->warmup(), run_.min_lr, run_.weight_decay,
                (long long)run_.batch_size, (long long)run_.epochs, run_.label_smoothing,
                run_.clip_norm, (unsigned long long)run_.seed);
    print_replicas(parallel, "sentence pairs");
  }

  optim::TrainSummary fit() override { return training_->fit(); }

  void print_result(const optim::TrainSummary& summary) override {
    if (summary.last_eval.count("exact_match"))
      std::printf("validation (unseen triples): exact match %.2f%%, BLEU %.4f; %lld steps, %.1f s\n",
                  100 * summary.last_eval.at("exact_match"), summary.last_eval.at("bleu"),
                  (long long)summary.steps, summary.seconds);
  }

  std::vector<std::string> next_commands(const cxxopts::ParseResult&, const std::string& program,
                                         const TrainingOutput& output,
                                         const std::string& checkpoint) const override {
    return {program + " eval --checkpoint " + checkpoint,
            program + " translate --checkpoint " + checkpoint + " --attention " +
                shell_quoted(output.out + "/attention.svg") + " \"we are eating bread\"",
            program + " explore --checkpoint " + checkpoint + " --out " +
                shell_quoted(output.out + "/explorer.html") +
                " \"we are eating bread\"   (every attention, in a browser)",
            program + " plot --run " + shell_quoted(output.out) +
                "   (redraws the curves; more --run flags compare runs)"};
  }

 private:
  TranslateRunConfig run_;
  TranslationCorpus corpus_;
  std::unique_ptr<TranslateTraining> training_;
};

}  // namespace

int translate_train(int argc, char** argv) {
  TranslateTrain program;
  return train_command(program, argc, argv);
}

int translate_eval(int argc, char** argv) {
  cxxopts::Options o("uwaga-translate eval",
                     "Exact-match accuracy and corpus BLEU-4 on the held-out test split.");
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-translate train", value<std::string>())
      ("split", "test or valid", value<std::string>()->default_value("test"))
      ("beam", "beam width (1: greedy)", value<std::int64_t>()->default_value("1"))
      ("length-penalty", "beam search ranks finished sentences by score / length^α: this α (0: total log-probability, 1: per word)", value<double>()->default_value("0"))
      ("eval-size", "evaluate only the first N sentences of the split (0: all)", value<std::int64_t>()->default_value("0"))
      ("json", "print one line of JSON on stdout (exact_match, bleu, n, loss, token_accuracy), the report on stderr")
      ("h,help", "show this help");
  add_threads_option(o, "1");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "eval");
  if (!r.count("checkpoint")) fail("eval: --checkpoint FILE is required");
  set_threads_from_option(r, "uwaga-translate", false);
  const std::string split = r["split"].as<std::string>();
  if (split != "test" && split != "valid")
    fail("eval: --split must be test or valid, got '", split, "'");
  const std::int64_t beam = r["beam"].as<std::int64_t>();
  if (beam < 1) fail("eval: --beam must be at least 1, got ", beam);
  const double length_penalty = r["length-penalty"].as<double>();
  if (!(length_penalty >= 0) || !std::isfinite(length_penalty))
    fail("eval: --length-penalty must be a finite number >= 0, got ", length_penalty);
  const std::int64_t limit = r["eval-size"].as<std::int64_t>();
  if (limit < 0) fail("eval: --eval-size must be >= 0 (0: all), got ", limit);

  LoadedTranslator t = load_translator(r["checkpoint"].as<std::string>());
  const TranslationCorpus corpus = generate_translation_corpus(t.run.corpus);
  const auto& pairs = split == "test" ? corpus.test : corpus.valid;
  TranslationEval e = evaluate_translation(*t.model, pairs, t.run, beam, limit, length_penalty);

  // With --json, stdout holds only the JSON (for programs); the report goes to stderr.
  std::FILE* report = r.count("json") ? stderr : stdout;
  std::ostringstream how;
  if (beam == 1) how << "greedy";
  else how << "beam " << beam;
  if (beam > 1 && length_penalty > 0) how << ", length penalty " << length_penalty;
  std::fprintf(report, "%s split (%lld sentences, subject-verb-object triples unseen in training), %s:\n",
              split.c_str(), (long long)e.n, how.str().c_str());
  std::fprintf(report, "  exact match     %.2f%% (%lld of %lld)\n", 100 * e.exact_match(),
              (long long)e.exact, (long long)e.n);
  std::fprintf(report, "  BLEU-4          %.4f\n", e.bleu);
  std::fprintf(report, "  loss            %.4f per word (teacher forcing), next-word accuracy %.2f%%\n",
              e.loss, 100 * e.token_accuracy);
  if (!e.mistakes.empty()) {
    std::fprintf(report, "  some mistakes:\n");
    for (const auto& m : e.mistakes) std::fprintf(report, "    %s\n", m.c_str());
  }
  if (r.count("json")) {
    nlohmann::json j = {{"exact_match", e.exact_match()}, {"bleu", e.bleu},
                        {"n", e.n},                       {"exact", e.exact},
                        {"loss", e.loss},                 {"token_accuracy", e.token_accuracy},
                        {"split", split},                 {"beam", beam},
                        {"length_penalty", length_penalty}};
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}

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
  nn::DecodingOptions decoding;
  decoding.bos_id = Vocabulary::kBos;
  decoding.eos_id = Vocabulary::kEos;
  decoding.beam = r["beam"].as<std::int64_t>();
  decoding.max_length = r["max-length"].as<std::int64_t>();
  if (decoding.beam < 1) fail("translate: --beam must be at least 1, got ", decoding.beam);
  decoding.length_penalty = r["length-penalty"].as<double>();
  if (!(decoding.length_penalty >= 0) || !std::isfinite(decoding.length_penalty))
    fail("translate: --length-penalty must be a finite number >= 0, got ",
         decoding.length_penalty);
  if (decoding.max_length < 0)
    fail("translate: --max-length must be >= 0 (0: automatic), got ", decoding.max_length);
  const std::string attention_path = r.count("attention") ? r["attention"].as<std::string>() : "";
  // An empty path would read as "no picture": the run would end well having drawn nothing.
  if (r.count("attention") && attention_path.empty())
    fail("translate: --attention is empty; give the SVG file to draw the attention to");

  LoadedTranslator t = load_translator(r["checkpoint"].as<std::string>());
  nn::Seq2SeqTransformer& model = *t.model;
  const Vocabulary& en = t.run.src_vocab;
  const Vocabulary& es = t.run.tgt_vocab;

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
    std::vector<std::int64_t> source = encode_source(line, en, &unknown);
    for (const auto& w : unknown)
      std::fprintf(stderr, "uwaga-translate: '%s' is not in the English vocabulary; it is read "
                   "as <unk>\n", printable(w).c_str());
    if (!unknown.empty()) {  // the sentence as read, the unknown words [marked]
      any_unknown = true;
      std::string marked;
      std::size_t next_unknown = 0;
      for (std::size_t k = 0; k + 1 < source.size(); ++k)
        marked += (k ? " " : "") + (source[k] == Vocabulary::kUnk
                                        ? "[" + unknown[next_unknown++] + "]"
                                        : en.word(source[k]));
      std::fprintf(stderr, "uwaga-translate: read as: %s  (%s vocab --checkpoint %s lists the "
                   "words it knows)\n", printable(marked).c_str(),
                   program_as_typed("uwaga-translate").c_str(),
                   shell_quoted(r["checkpoint"].as<std::string>()).c_str());
    }
    // "don't" splits at its apostrophe into "don" and "t", both unknown, and the negation is
    // lost without a word about it: say what the corpus writes instead.
    const bool apostrophe = line.find('\'') != std::string::npos ||
                            line.find("\xE2\x80\x99") != std::string::npos;  // ' or ’
    if (!unknown.empty() && apostrophe)
      std::fprintf(stderr, "uwaga-translate: the corpus has no contractions; write them out "
                   "(\"do not\", \"does not\", \"we are\", \"i am\")\n");
    if (source.size() == 1) {  // no words: nothing to translate
      std::printf("\n");
      std::fflush(stdout);
      continue;
    }
    const auto limit = static_cast<std::size_t>(t.run.model.max_length);
    if (source.size() > limit) {
      std::fprintf(stderr, "uwaga-translate: a sentence of %zu words is longer than the model "
                   "takes; only its first %zu words are translated\n", source.size() - 1,
                   limit - 1);
      source.resize(limit - 1);
      source.push_back(Vocabulary::kEos);
    }
    const nn::Hypothesis h = decoding.beam == 1 ? nn::greedy_decode(model, {source}, decoding)[0]
                                                : nn::beam_search(model, source, decoding);
    if (!h.finished)
      std::fprintf(stderr, "uwaga-translate: the translation of '%s' reached the length bound "
                   "without ending\n", printable(line).c_str());
    std::printf("%s\n", words_of(h.tokens, es).c_str());
    std::fflush(stdout);

    if (!attention_path.empty() && !attention_done) {
      attention_done = true;
      const CrossAttention a = translation_attention(model, t.run, source, h).cross_attention();
      const std::string title =
          "\"" + printable(line) + "\" -> \"" + words_of(h.tokens, es) + "\"";
      save_attention_svg(a, title, attention_path);
      const std::vector<std::int64_t> strongest = a.strongest_source();
      const std::vector<double> mean = a.average();
      std::fprintf(stderr, "cross-attention (average over layers and heads) written to %s:\n",
                   attention_path.c_str());
      for (std::size_t k = 0; k < a.produced.size(); ++k)
        std::fprintf(stderr, "  %s attends most to %s (%.2f)\n",
                     padded(a.produced[k], 14).c_str(), a.source[strongest[k]].c_str(),
                     mean[k * a.source.size() + strongest[k]]);
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
  nn::DecodingOptions decoding;
  decoding.bos_id = Vocabulary::kBos;
  decoding.eos_id = Vocabulary::kEos;
  decoding.beam = r["beam"].as<std::int64_t>();
  if (decoding.beam < 1) fail("explore: --beam must be at least 1, got ", decoding.beam);

  const std::string checkpoint = r["checkpoint"].as<std::string>();
  LoadedTranslator t = load_translator(checkpoint);
  std::vector<std::string> unknown;
  std::vector<std::int64_t> source = encode_source(sentences[0], t.run.src_vocab, &unknown);
  for (const auto& w : unknown)
    std::fprintf(stderr, "uwaga-translate: '%s' is not in the English vocabulary; it is read "
                 "as <unk>\n", printable(w).c_str());
  if (source.size() == 1) fail("explore: '", printable(sentences[0]), "' has no words");
  if (source.size() > static_cast<std::size_t>(t.run.model.max_length))
    fail("explore: the sentence has ", source.size() - 1, " words; the model takes at most ",
         t.run.model.max_length - 1);
  const nn::Hypothesis h = decoding.beam == 1
                               ? nn::greedy_decode(*t.model, {source}, decoding)[0]
                               : nn::beam_search(*t.model, source, decoding);
  const TranslationAttention a = translation_attention(*t.model, t.run, source, h);
  const std::string translation = words_of(h.tokens, t.run.tgt_vocab);
  const auto& m = t.run.model;

  AttentionExplorer e;
  e.title = "uwaga-translate: \"" + sentences[0] + "\" -> \"" + translation + "\"";
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
  const std::string out = r["out"].as<std::string>();
  save_attention_explorer(e, out);
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
  // The words in alphabetical order, wrapped at 80 columns; the four special tokens apart.
  auto list = [](const char* name, const Vocabulary& vocab) {
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
  };
  if (language != "es") list("English", run.src_vocab);
  if (language == "both") std::printf("\n");
  if (language != "en") list("Spanish", run.tgt_vocab);
  return 0;
}

int translate_plot(int argc, char** argv) {
  return plot_training_runs("uwaga-translate", argc, argv);
}

}  // namespace uwaga::apps
