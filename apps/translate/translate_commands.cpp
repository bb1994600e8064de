#include "apps/translate/translate_commands.h"

#include <cxxopts.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/common/command_line.h"
#include "apps/common/memory_budget.h"
#include "apps/common/thread_policy.h"
#include "apps/common/run_summary.h"
#include "apps/common/train_command.h"
#include "apps/common/training_flags.h"
#include "apps/common/training_plot.h"
#include "apps/translate/translate_checkpoint.h"
#include "apps/translate/translate_training.h"
#include "core/graph.h"
#include "core/shape_ops.h"
#include "core/threads.h"
#include "optim/adam.h"
#include "optim/checkpoint.h"

namespace uwaga::apps {
namespace {

using cxxopts::value;

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
    const RunSummary summary(text());
    summary.heading(run_.preset);
    summary.line("model", "encoder %lld + decoder %lld blocks, dim %lld, heads %lld, mlp %lld, "
                 "%s positions, dropout %g",
                 (long long)m.encoder_layers, (long long)m.decoder_layers, (long long)m.dim,
                 (long long)m.heads, (long long)m.mlp_dim, m.positions.c_str(), m.dropout);
    summary.line("vocab", "%lld English, %lld Spanish words (with PAD, BOS, EOS, UNK)",
                 (long long)m.src_vocab, (long long)m.tgt_vocab);
    summary.line("params", "%lld", (long long)training_->model().num_parameters());
    summary.line("data", "%zu training, %zu validation, %zu test pairs (corpus seed %llu; valid "
                 "and test use subject-verb-object triples never seen in training)",
                 corpus_.train.size(), corpus_.valid.size(), corpus_.test.size(),
                 (unsigned long long)run_.corpus.seed);
    summary.optimiser(run_, *training_);
    summary.threads(parallel);
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

// eval's report: the split and the decoding, then the scores and a few mistakes.
void print_eval_report(std::FILE* report, const TranslationEval& e, const std::string& split,
                       std::int64_t beam, double length_penalty) {
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
}

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
  print_eval_report(report, e, split, beam, length_penalty);
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

int translate_plot(int argc, char** argv) {
  return plot_training_runs("uwaga-translate", argc, argv);
}

}  // namespace uwaga::apps
