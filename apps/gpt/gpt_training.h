#pragma once
// One uwaga-gpt training run, set up the one way `uwaga-gpt train` uses: a GPT on a character
// corpus, predicting every next character of random windows of the training text; and the
// validation loss shared by `train` and `eval`.
#include <map>
#include <memory>
#include <string>

#include "apps/common/training.h"
#include "apps/gpt/gpt_run_config.h"
#include "data/text/char_corpus.h"
#include "nn/gpt.h"
#include "nn/loss.h"

namespace uwaga::apps {

// Windows per forward/backward pass of one replica (optim::DataParallel's micro_batch).
constexpr std::int64_t kGptMicroBatch = 16;
// The most logits (window × tokens × vocabulary) one pass holds, in training and evaluation: 16
// windows of 64 characters of a 65-character vocabulary are 67 K; GPT-2's 50,257 tokens fill
// 16 M with 5 windows of 64 tokens (64 MB in float32, as much again for their softmax and its
// gradient in training).
constexpr std::int64_t kGptMaxLogits = 16 << 20;
// Windows of `window` tokens per pass so that their logits stay within kGptMaxLogits (at least
// one, at most `usual`).
std::int64_t gpt_windows_per_pass(std::int64_t usual, std::int64_t window, std::int64_t vocab);

struct LanguageModelEval {
  std::int64_t characters = 0;  // predictions scored (tokens; characters for a character model)
  std::int64_t bytes = 0;       // the characters (bytes) those predicted tokens spell
  double loss = 0;              // mean cross-entropy in nats per prediction
  // loss / ln 2 per character: loss · predictions / (bytes · ln 2), so character and BPE models
  // compare on one scale.
  double bits_per_character() const;
  double perplexity() const;          // exp(loss), per prediction
};

// The mean next-token loss of `model` over consecutive windows of `window` tokens (0: the
// model's context) of `ids` (all of them, or the first `windows` when > 0), in eval mode without a
// graph. `lengths`: the bytes of each token id (token_lengths); none: one each.
LanguageModelEval evaluate_language_model(nn::Gpt& model, const std::vector<std::int64_t>& ids,
                                          std::int64_t windows = 0,
                                          const std::vector<std::int64_t>& lengths = {},
                                          std::int64_t window = 0);

// Tokens of each sample printed during training (GptRunConfig::sample_every), as llm.c's demo.
constexpr std::int64_t kTrainingSampleTokens = 64;

// AdamW as uwaga-gpt trains with it: the run's learning rate, β1 = 0.9 and the run's β2 (0.99 as
// small character models use; GPT-2's fine-tunes set theirs). apps/bench/gpt_throughput.cpp
// measures the same optimiser.
optim::AdamOptions gpt_adam_options(const GptRunConfig& run);

// What a uwaga-gpt run trains, and how: the model from the run's seed (or, with --init, the
// weights the program loads into it before the first step); batches of random windows of the
// training text (data/text/char_corpus.h); cross-entropy over every position of every window;
// AdamW with weight decay on the weights only; warm-up + cosine; the validation loss after every
// epoch, and every run.sample_every steps a sample. The run's vocabulary must be the corpus's.
class GptTraining : public Training<GptRunConfig, nn::Gpt, CharWindows, nn::CrossEntropyLoss> {
 public:
  // `corpus` must outlive this object. `options`: the run's files, budget, threads and log; the
  // configuration, seed, clipping and epochs come from `run`.
  GptTraining(const GptRunConfig& run, const CharCorpus& corpus, optim::TrainerOptions options);

 private:
  std::map<std::string, double> evaluate() override;
  // Prints kTrainingSampleTokens tokens once run.sample_every more steps have passed.
  void print_sample_if_due();
  const CharCorpus& corpus_;
  std::vector<std::int64_t> token_lengths_;
  std::int64_t sampled_at_ = 0;  // the step of the last sample
};

}  // namespace uwaga::apps
