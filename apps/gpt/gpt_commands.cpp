#include "apps/gpt/gpt_commands.h"

#include <cxxopts.hpp>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/common/run_summary.h"
#include "apps/common/train_command.h"
#include "apps/gpt/gpt_checkpoint.h"
#include "apps/gpt/gpt_tokenizer_flag.h"
#include "apps/gpt/gpt_tokens.h"
#include "apps/gpt/gpt_training.h"
#include "core/threads.h"
#include "data/text/bpe_corpus.h"
#include "nn/gpt2_checkpoint.h"

namespace uwaga::apps {
namespace {

using cxxopts::value;

// Applies the model and optimisation flags the user gave on top of a preset.
void apply_overrides(GptRunConfig& run, const cxxopts::ParseResult& r) {
  auto set = [&](const char* flag, auto& field) { override_from(r, flag, field); };
  if (r.count("text")) run.text = text_path_for_run(r["text"].as<std::string>());
  set("context", run.model.context);
  set("dim", run.model.dim);
  set("layers", run.model.layers);
  set("heads", run.model.heads);
  set("mlp-dim", run.model.mlp_dim);
  set("dropout", run.model.dropout);
  if (r.count("tie-weights")) run.model.tie_weights = true;
  if (r.count("tokenizer")) {  // GPT-2's files (or a directory of them) are recorded as "gpt2"
    const std::string tokenizer = r["tokenizer"].as<std::string>();
    run.tokenizer = names_tokenizer_files(tokenizer) ? "gpt2" : tokenizer;
  }
  if (r.count("init")) run.init = init_record(r["init"].as<std::string>());
  override_training_flags(r, run);
  set("steps-per-epoch", run.steps_per_epoch);
  set("eval-windows", run.eval_windows);
  set("window", run.window);
  set("beta2", run.beta2);
  set("sample-every", run.sample_every);
}

// The vocabulary files --tokenizer names (gpt2 by default).
BpeTokenizer tokenizer_files_of(const cxxopts::ParseResult& r) {
  const std::string flag = r.count("tokenizer") ? r["tokenizer"].as<std::string>() : "gpt2";
  return load_tokenizer_files(names_tokenizer_files(flag) ? flag : "gpt2");
}

// A new run from --init: the model's shape (and, from a uwaga-gpt checkpoint, its tokenizer)
// from the file; a shape flag the user typed must agree with it.
void take_model_from_init(GptRunConfig& run, const cxxopts::ParseResult& r) {
  const std::string& file = run.init.file;
  nn::GptConfig from;
  if (is_gpt2_checkpoint(file)) {
    from = nn::gpt2_config(file);
    if (run.tokenizer != "gpt2")
      fail("--init '", file, "' is a GPT-2 checkpoint, which reads GPT-2's tokens: give "
           "--tokenizer gpt2 (after bash data/fetch.sh gpt2-tokenizer) or --tokenizer DIR, not ",
           run.tokenizer);
    run.bpe = tokenizer_files_of(r);
    if (run.bpe.size() != from.vocab)
      fail("the tokenizer '", r.count("tokenizer") ? r["tokenizer"].as<std::string>() : "gpt2",
           "' has ", run.bpe.size(), " tokens, but the embedding of --init '", file, "' has ",
           from.vocab, " rows");
  } else {
    if (r.count("tokenizer"))
      fail("--tokenizer: --init '", file, "' is a uwaga-gpt checkpoint, which carries its own "
           "tokenizer");
    const GptRunConfig source = read_gpt_run_config(file);
    from = source.model;
    run.tokenizer = source.tokenizer, run.vocab = source.vocab, run.bpe = source.bpe;
  }
  auto agree = [&](const char* flag, std::int64_t typed, std::int64_t in_file) {
    if (r.count(flag) && typed != in_file)
      fail("--", flag, " ", typed, " contradicts --init '", file, "', whose model has ", flag,
           " ", in_file, " (leave --", flag, " out: the shape comes from the file)");
  };
  agree("context", run.model.context, from.context);
  agree("dim", run.model.dim, from.dim);
  agree("layers", run.model.layers, from.layers);
  agree("heads", run.model.heads, from.heads);
  agree("mlp-dim", run.model.mlp_dim, from.mlp_dim);
  if (r.count("tie-weights") && !from.tie_weights)
    fail("--tie-weights contradicts --init '", file, "', whose head is not tied");
  from.dropout = run.model.dropout;  // how it trains, not its shape
  run.model = from;
}

// The weights of --init into `model`, which was built with the file's shape.
void load_init_weights(nn::Gpt& model, const GptInit& init) {
  check_loading_fits(init.file, static_cast<double>(model.num_parameters()));
  if (is_gpt2_checkpoint(init.file)) {
    model.load_state_dict(nn::load_gpt2_state(init.file));
  } else {
    model.load_state_dict(load_gpt(init.file).model->state_dict());
  }
  release_cached_memory();  // the file's tensors and the loaded copy: as large as the model
}

// The text of `run`, split and encoded; a new run builds its vocabulary from the training part
// (its characters, or with --tokenizer bpe:N a BPE of N merges learned from it).
CharCorpus load_corpus(GptRunConfig& run, bool new_run) {
  const std::string text = read_run_text(run, new_run);
  const bool build_vocabulary = new_run && run.init.empty();  // --init brings its own
  if (!reads_characters(run)) {
    const bool learn = build_vocabulary && run.tokenizer != "gpt2";
    BpeCorpus c = learn ? split_bpe_corpus(text, run.text, run.window_length(),
                                           bpe_merges_of(run.tokenizer))
                        : split_bpe_corpus(text, run.text, run.window_length(), run.bpe);
    if (learn) run.bpe = c.tokenizer, run.model.vocab = c.tokenizer.size();
    if (new_run && run.vocab.size() == 0)  // the training text's characters travel too (for the
      run.vocab = CharVocabulary::build(   // record; the tokens are the bpe's)
          text.substr(0, static_cast<std::size_t>(c.train_bytes)));
    return CharCorpus{CharVocabulary(), std::move(c.train), std::move(c.valid)};
  }
  if (!build_vocabulary) return split_char_corpus(text, run.text, run.window_length(), run.vocab);
  CharCorpus corpus = split_char_corpus(text, run.text, run.window_length());
  run.vocab = corpus.vocab;
  run.model.vocab = corpus.vocab.size();
  return corpus;
}

// uwaga-gpt's part of `train` (apps/common/train_command.h): a character-level GPT on a text.
class GptTrain : public TrainProgram {
 public:
  TrainModeText text() const override {
    return {.program = "uwaga-gpt",
            .description = "Train a GPT on a text, on its characters or (--tokenizer bpe:N) on "
                           "byte-pair tokens, or fine-tune GPT-2 (--init model.safetensors "
                           "--tokenizer gpt2).",
            .presets = "shakespeare-tiny, shakespeare-small, gpt2-shakespeare, "
                       "gpt2-shakespeare-long or smoke",
            .default_preset = "shakespeare-tiny",
            .examples = "windows",
            .seeded = "initialisation, windows and dropout",
            .micro_batch = kGptMicroBatch,
            .micro_batch_items = "windows"};
  }

  void add_flags(cxxopts::Options& o) const override {
    add_text_flag(o, "the text file (default: data/cache/tinyshakespeare/input.txt)");
    o.add_options()
        ("context", "window length T: characters the model reads", value<std::int64_t>())
        ("dim", "model width D", value<std::int64_t>())
        ("layers", "transformer blocks", value<std::int64_t>())
        ("heads", "attention heads h (must divide D)", value<std::int64_t>())
        ("mlp-dim", "hidden width of the MLPs", value<std::int64_t>())
        ("dropout", "dropout on the embeddings, in [0, 1)", value<double>())
        ("tie-weights", "the output head reuses the token embedding table")
        ("tokenizer", "char (one token per character), bpe:N (a byte-level BPE of N merges "
                      "learned from the training text), gpt2 (data/cache/gpt2-tokenizer) or a "
                      "directory with encoder.json and vocab.bpe", value<std::string>())
        ("init", "start from the weights of a Hugging Face GPT-2 model.safetensors (any size, "
                 "config.json beside it) or a uwaga-gpt checkpoint: the model's shape comes "
                 "from the file, the optimizer starts fresh", value<std::string>())
        ("window", "tokens per training and validation window (default: the model's context)",
         value<std::int64_t>())
        ("beta2", "AdamW's beta2 (beta1 is 0.9)", value<double>())
        ("sample-every", "print a sample of 64 tokens every N steps (0: none)", value<std::int64_t>())
        ("steps-per-epoch", "batches of random windows per epoch", value<std::int64_t>())
        ("eval-windows", "validation windows scored after each epoch (0: all)", value<std::int64_t>());
  }

  RunSettings set_up(const cxxopts::ParseResult& r, const TrainingOutput& output) override {
    run_ = new_or_resumed_run(r, output, read_gpt_run_config, gpt_preset, apply_overrides);
    new_run_ = !output.resume;
    if (new_run_ && !run_.init.empty()) {
      take_model_from_init(run_, r);
    } else if (new_run_ && run_.preset.rfind("gpt2-", 0) == 0) {
      fail("--preset ", run_.preset, " fine-tunes GPT-2: give --init gpt2/model.safetensors "
           "(Hugging Face's, config.json beside it) or a uwaga-gpt checkpoint");
    } else if (new_run_ && run_.tokenizer == "gpt2") {  // GPT-2's tokens, random weights
      run_.bpe = tokenizer_files_of(r);
      run_.model.vocab = run_.bpe.size();
    }
    run_.model.attention = attention_path(r);
    run_.validate();  // the model's fields are checked before the text is read
    const nn::GptConfig& m = run_.model;
    nn::GptConfig declared = m;  // a new run's vocabulary comes with its text: at most
    if (new_run_ && run_.init.empty() && run_.tokenizer != "gpt2")  // 256 characters (bytes), and
      declared.vocab = 256 + bpe_merges_of(run_.tokenizer);  // with bpe:N the N merges beyond them
    // The windows whose activations are alive at once: each replica (one per thread, or one for
    // a large model) takes at most windows_per_pass of them a pass (GPT-2 at T 1024: one).
    const double parameters = declared_parameter_count<nn::Gpt>(declared);
    const std::int64_t windows_per_pass =
        gpt_windows_per_pass(kGptMicroBatch, run_.window_length(), declared.vocab);
    const std::int64_t replicas = parameters >= kOneReplicaParameters ? 1 : num_threads();
    const auto at_once = std::min<double>(double(run_.batch_size),
                                          double(windows_per_pass) * double(replicas));
    footprint_ = {parameters, at_once, double(run_.window_length()), double(m.dim),
                  double(m.layers), double(m.heads), double(m.mlp_dim)};
    check_training_fits(footprint_, "--dim, --layers, --window or --batch-size");
    corpus_ = load_corpus(run_, new_run_);
    return {run_.to_json(), 0, footprint_.params,
            gpt_windows_per_pass(kGptMicroBatch, run_.window_length(), run_.model.vocab),
            gpt_save_every(run_)};
  }

  void start(optim::TrainerOptions options) override {
    training_ = std::make_unique<GptTraining>(run_, corpus_, std::move(options));
    if (new_run_ && !run_.init.empty()) load_init_weights(training_->model(), run_.init);
  }

  void print_summary(const optim::DataParallelOptions& parallel) override {
    const auto& m = run_.model;
    const RunSummary summary(text());
    summary.heading(run_.preset);
    summary.line("model", "%lld blocks, dim %lld, heads %lld, mlp %lld, context %lld, dropout %g%s",
                 (long long)m.layers, (long long)m.dim, (long long)m.heads, (long long)m.mlp_dim,
                 (long long)m.context, m.dropout, m.tie_weights ? ", tied head" : "");
    summary.line("params", "%lld", (long long)training_->model().num_parameters());
    if (!run_.init.empty())
      summary.line("init", "%s (%lld bytes, SHA-256 %.16s…)", run_.init.file.c_str(),
                   (long long)run_.init.bytes, run_.init.sha256.c_str());
    summary.line("memory", "about %s (parameters, gradients, Adam's moments, activations of %lld "
                 "window%s of %lld tokens at once)", human_bytes(training_bytes(footprint_)).c_str(),
                 (long long)footprint_.batch, footprint_.batch == 1 ? "" : "s",
                 (long long)run_.window_length());
    if (reads_characters(run_))
      summary.line("data", "%s: %zu training, %zu validation characters, %lld distinct",
                   run_.text.c_str(), corpus_.train.size(), corpus_.valid.size(),
                   (long long)m.vocab);
    else
      summary.line("data", "%s: %zu training, %zu validation tokens of a %s vocabulary of %lld",
                   run_.text.c_str(), corpus_.train.size(), corpus_.valid.size(),
                   run_.tokenizer.c_str(), (long long)m.vocab);
    summary.optimiser(run_, *training_);
    summary.threads(parallel);
  }

  optim::TrainSummary fit() override { return training_->fit(); }

  void print_result(const optim::TrainSummary& summary) override {
    if (summary.last_eval.count("loss"))
      std::printf("validation: loss %.4f nats/%s (%.4f bits/char); %lld steps, %.1f s\n",
                  summary.last_eval.at("loss"), reads_characters(run_) ? "char" : "token",
                  summary.last_eval.at("bits_per_character"), (long long)summary.steps,
                  summary.seconds);
  }

  std::vector<std::string> next_commands(const cxxopts::ParseResult&, const std::string& program,
                                         const TrainingOutput& output,
                                         const std::string& checkpoint) const override {
    // A prompt the model can read: the first line of the training text, up to 16 characters.
    // (With BPE tokens, the first tokens' text up to 16 characters: fewer tokens than that.)
    const auto longest = static_cast<std::size_t>(std::min<std::int64_t>(16, run_.model.context));
    std::string prompt;
    for (std::size_t i = 0; i < corpus_.train.size() && prompt.size() < longest; ++i) {
      const std::string piece = decode_ids(run_, {corpus_.train[i]});
      if (piece.find('\n') != std::string::npos || prompt.size() + piece.size() > longest) break;
      prompt += piece;
    }
    std::vector<std::string> next = {program + " eval --checkpoint " + checkpoint,
                                     program + " sample --checkpoint " + checkpoint};
    if (!prompt.empty())
      next.push_back(program + " explore --checkpoint " + checkpoint + " --prompt " +
                     shell_quoted(prompt) + " --out " +
                     shell_quoted(output.out + "/explorer.html") +
                     "   (every layer and head, in a browser)");
    return next;
  }

 private:
  GptRunConfig run_;
  bool new_run_ = true;
  TransformerFootprint footprint_;
  CharCorpus corpus_;
  std::unique_ptr<GptTraining> training_;
};

}  // namespace

int gpt_train(int argc, char** argv) {
  GptTrain program;
  return train_command(program, argc, argv);
}

int gpt_eval(int argc, char** argv) {
  cxxopts::Options o("uwaga-gpt eval",
                     "Validation loss, bits per character and perplexity of a checkpoint.");
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-gpt train, or a GPT-2 model.safetensors", value<std::string>())
      ("eval-windows", "score only the first N validation windows (0: all)", value<std::int64_t>()->default_value("0"))
      ("window", "tokens per window (default: the run's, or the model's context)", value<std::int64_t>())
      ("json", "end with one line of JSON: loss, bits_per_character, perplexity, characters (predictions), bytes")
      ("h,help", "show this help");
  add_text_flag(o, "the text file (default: the one the run trained on; for GPT-2 tinyshakespeare)");
  tokenizer_flag(o);
  add_threads_option(o, "all cores");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "eval");
  if (!r.count("checkpoint")) fail("eval: --checkpoint FILE is required");
  set_threads_from_option(r, "uwaga-gpt", true);
  const std::int64_t windows = r["eval-windows"].as<std::int64_t>();
  if (windows < 0) fail("eval: --eval-windows must be >= 0 (0: all), got ", windows);

  LoadedGpt g = load_any_gpt(r["checkpoint"].as<std::string>(), tokenizer_of(r));
  if (r.count("window")) {
    g.run.window = r["window"].as<std::int64_t>();
    if (g.run.window < 1 || g.run.window > g.run.model.context)
      fail("eval: --window must be from 1 to the model's context of ", g.run.model.context,
           ", got ", g.run.window);
  }
  if (r.count("text")) {  // another text, or the same one named another way: no hash to match
    g.run.text = text_path_for_run(r["text"].as<std::string>());
    g.run.text_hash.clear();
  }
  const CharCorpus corpus = load_corpus(g.run, false);
  const LanguageModelEval e =
      evaluate_language_model(*g.model, corpus.valid, windows, token_lengths(g.run),
                              g.run.window_length());
  const char* unit = token_unit(g.run);
  std::printf("validation (last 10 %% of %s, %lld %ss predicted, %lld characters):\n",
              g.run.text.c_str(), (long long)e.characters, unit, (long long)e.bytes);
  std::printf("  loss            %.4f nats per %s\n", e.loss, unit);
  std::printf("  bits/character  %.4f\n", e.bits_per_character());
  std::printf("  perplexity      %.3f (per %s)\n", e.perplexity(), unit);
  if (r.count("json")) {
    const nlohmann::json j = {{"loss", e.loss},
                              {"bits_per_character", e.bits_per_character()},
                              {"perplexity", e.perplexity()},
                              {"characters", e.characters},
                              {"bytes", e.bytes}};
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}

int gpt_export(int argc, char** argv) {
  cxxopts::Options o("uwaga-gpt export",
                     "Write a checkpoint as Hugging Face's GPT-2 files: model.safetensors and "
                     "config.json as GPT2LMHeadModel.save_pretrained writes them, and the "
                     "tokenizer's encoder.json and vocab.bpe when it has byte-pair tokens.");
  tokenizer_flag(o);
  o.add_options()
      ("checkpoint", "a checkpoint written by uwaga-gpt train, or a GPT-2 model.safetensors", value<std::string>())
      ("hf", "the directory to write (created if missing)", value<std::string>())
      ("h,help", "show this help");
  auto r = o.parse(argc, argv);
  if (wants_help(o, r)) return 0;
  reject_unexpected_arguments(r, "export");
  if (!r.count("checkpoint")) fail("export: --checkpoint FILE is required");
  if (!r.count("hf")) fail("export: --hf DIR is required");
  const std::string checkpoint = r["checkpoint"].as<std::string>(), dir = r["hf"].as<std::string>();
  const LoadedGpt g = load_any_gpt(checkpoint, tokenizer_of(r));
  nn::save_gpt2(*g.model, dir);
  if (!reads_characters(g.run)) g.run.bpe.save(dir);
  std::printf("wrote %s/model.safetensors and config.json%s (%lld layers, width %lld, "
              "vocabulary %lld)\n", dir.c_str(),
              reads_characters(g.run) ? "" : ", encoder.json and vocab.bpe",
              (long long)g.run.model.layers, (long long)g.run.model.dim,
              (long long)g.run.model.vocab);
  if (reads_characters(g.run))
    std::printf("its tokens are characters, which Hugging Face's GPT-2 tokenizer cannot read; "
                "map them yourself (the run's \"vocab\" in the checkpoint's metadata)\n");
  return 0;
}

}  // namespace uwaga::apps
