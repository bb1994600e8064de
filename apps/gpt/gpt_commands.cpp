#include "apps/gpt/gpt_commands.h"

#include <cxxopts.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <sstream>
#include <nlohmann/json.hpp>

#include "apps/common/attention_explorer.h"
#include "apps/common/command_line.h"
#include "apps/common/memory_budget.h"
#include "apps/common/printable_text.h"
#include "apps/common/token_attention_svg.h"
#include "apps/common/train_command.h"
#include "apps/common/training_flags.h"
#include "apps/gpt/gpt_checkpoint.h"
#include "apps/gpt/gpt_tokens.h"
#include "apps/gpt/gpt_training.h"
#include "core/graph.h"
#include "core/shape_ops.h"
#include "core/storage.h"
#include "core/threads.h"
#include "data/text/bpe_corpus.h"
#include "data/text/bpe_stream_encoder.h"
#include "data/text/char_corpus.h"
#include "nn/gpt2_checkpoint.h"
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
  if (is_gpt2_checkpoint(init.file)) model.load_state_dict(nn::load_gpt2(init.file)->state_dict());
  else model.load_state_dict(load_gpt(init.file).model->state_dict());
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

void tokenizer_flag(cxxopts::Options& o) {
  o.add_options()
      ("tokenizer", "for a GPT-2 checkpoint (Hugging Face's model.safetensors): its vocabulary, "
                    "gpt2 (data/cache/gpt2-tokenizer) or a directory with encoder.json and "
                    "vocab.bpe", value<std::string>());
}

std::string tokenizer_of(const cxxopts::ParseResult& r) {
  return r.count("tokenizer") ? r["tokenizer"].as<std::string>() : "";
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
    footprint_ = {declared_parameter_count<nn::Gpt>(declared), double(run_.batch_size),
                  double(run_.window_length()), double(m.dim), double(m.layers), double(m.heads),
                  double(m.mlp_dim)};
    check_training_fits(footprint_, "--dim, --layers, --window or --batch-size");
    corpus_ = load_corpus(run_, new_run_);
    return {run_.to_json(), 0, footprint_.params,
            gpt_windows_per_pass(kGptMicroBatch, run_.window_length(), run_.model.vocab)};
  }

  void start(optim::TrainerOptions options) override {
    training_ = std::make_unique<GptTraining>(run_, corpus_, std::move(options));
    if (new_run_ && !run_.init.empty()) load_init_weights(training_->model(), run_.init);
  }

  void print_summary(const optim::DataParallelOptions& parallel) override {
    const auto& m = run_.model;
    std::printf("uwaga-gpt: %s\n", run_.preset.empty() ? "custom" : run_.preset.c_str());
    std::printf("  model     %lld blocks, dim %lld, heads %lld, mlp %lld, context %lld, dropout %g%s\n",
                (long long)m.layers, (long long)m.dim, (long long)m.heads, (long long)m.mlp_dim,
                (long long)m.context, m.dropout, m.tie_weights ? ", tied head" : "");
    std::printf("  params    %lld\n", (long long)training_->model().num_parameters());
    if (!run_.init.empty())
      std::printf("  init      %s (%lld bytes, SHA-256 %.16s…)\n", run_.init.file.c_str(),
                  (long long)run_.init.bytes, run_.init.sha256.c_str());
    std::printf("  memory    about %s (parameters, gradients, Adam's moments, activations of "
                "%lld windows of %lld tokens)\n", human_bytes(training_bytes(footprint_)).c_str(),
                (long long)run_.batch_size, (long long)run_.window_length());
    if (reads_characters(run_))
      std::printf("  data      %s: %zu training, %zu validation characters, %lld distinct\n",
                  run_.text.c_str(), corpus_.train.size(), corpus_.valid.size(), (long long)m.vocab);
    else
      std::printf("  data      %s: %zu training, %zu validation tokens of a %s vocabulary of %lld\n",
                  run_.text.c_str(), corpus_.train.size(), corpus_.valid.size(),
                  run_.tokenizer.c_str(), (long long)m.vocab);
    std::printf("  optimiser AdamW lr %g (warm-up %lld steps, cosine to %g), beta2 %g, weight "
                "decay %g, batch %lld windows, %lld epochs of %lld steps, clip %g, seed %llu\n",
                run_.lr, (long long)training_->warmup(), run_.min_lr, run_.beta2, run_.weight_decay,
                (long long)run_.batch_size, (long long)run_.epochs,
                (long long)run_.steps_per_epoch, run_.clip_norm, (unsigned long long)run_.seed);
    print_replicas(parallel, "windows");
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
