#include "apps/gpt/gpt_training.h"

#include <algorithm>
#include <cmath>

#include <cstdio>

#include "apps/common/printable_text.h"
#include "apps/gpt/gpt_tokens.h"
#include "core/graph.h"
#include "core/storage.h"
#include "nn/inference_scope.h"
#include "nn/sampling.h"

namespace uwaga::apps {

double LanguageModelEval::bits_per_character() const {
  if (bytes == characters || bytes == 0) return loss / std::log(2.0);
  return loss * static_cast<double>(characters) / (static_cast<double>(bytes) * std::log(2.0));
}
double LanguageModelEval::perplexity() const { return std::exp(loss); }

std::int64_t gpt_windows_per_pass(std::int64_t usual, std::int64_t window, std::int64_t vocab) {
  return std::clamp<std::int64_t>(kGptMaxLogits / std::max<std::int64_t>(1, window * vocab), 1,
                                  usual);
}

LanguageModelEval evaluate_language_model(nn::Gpt& model, const std::vector<std::int64_t>& ids,
                                          std::int64_t windows,
                                          const std::vector<std::int64_t>& lengths,
                                          std::int64_t window) {
  const nn::InferenceScope inference(model);  // eval mode, no graph, until the return
  const std::int64_t T = window > 0 ? window : model.config.context;
  std::int64_t count = consecutive_window_count(ids, T);
  if (windows > 0) count = std::min(count, windows);
  const std::int64_t batch = gpt_windows_per_pass(32, T, model.config.vocab);
  const nn::CrossEntropyLoss loss;
  LanguageModelEval result;
  double loss_sum = 0;
  for (std::int64_t first = 0; first < count; first += batch) {
    const Batch b = consecutive_windows(ids, T, first, std::min(batch, count - first));
    const Tensor logits = model.forward(b.inputs[0]);  // (B, T, V)
    const std::int64_t n = loss.count(b.targets);
    loss_sum += loss(logits, b.targets).item() * static_cast<double>(n);
    result.characters += n;
    const std::int64_t* target = b.targets.data<std::int64_t>();
    for (std::int64_t i = 0; i < b.targets.numel(); ++i)
      if (target[i] >= 0) result.bytes += lengths.empty() ? 1 : lengths.at(target[i]);
  }
  result.loss = result.characters ? loss_sum / static_cast<double>(result.characters) : 0.0;
  return result;
}

optim::AdamOptions gpt_adam_options(const GptRunConfig& run) { return {run.lr, 0.9, run.beta2}; }

GptTraining::GptTraining(const GptRunConfig& run, const CharCorpus& corpus,
                         optim::TrainerOptions options)
    : Training(run,
               [&] {  // run.steps_per_epoch batches of random windows make an epoch
                 return CharWindows(corpus.train, step_batch(run), run.window_length(),
                                    run.steps_per_epoch, run.seed);
               },
               nn::CrossEntropyLoss({-100, run.label_smoothing}), gpt_adam_options(run), "valid",
               std::move(options)),
      corpus_(corpus),
      token_lengths_(token_lengths(run)) {}

std::map<std::string, double> GptTraining::evaluate() {
  // The training step's buffers, cached for the next step, have other sizes than evaluation's and
  // sampling's: returned first, so that those do not stand on top of them (GPT-2 small: 0.2 GB),
  // and theirs after.
  release_cached_memory();
  const LanguageModelEval e = evaluate_language_model(*model_, corpus_.valid, run_.eval_windows,
                                                      token_lengths_, run_.window_length());
  print_sample_if_due();
  release_cached_memory();
  return {{"loss", e.loss}, {"bits_per_character", e.bits_per_character()}};
}

void GptTraining::print_sample_if_due() {
  const std::int64_t step = optimizer_.steps();
  if (run_.sample_every <= 0 || step / run_.sample_every == sampled_at_ / run_.sample_every)
    return;
  sampled_at_ = step;
  // As llm.c's demo: from the first token of the validation text, drawn at τ = 1 with a fixed
  // seed, so that runs compare.
  nn::TokenStream stream(*model_, {corpus_.valid.front()}, nn::SamplingOptions{}, 1337);
  for (std::int64_t i = 0; i < kTrainingSampleTokens; ++i) stream.next();
  std::printf("sample after step %lld:\n%s\n---\n", static_cast<long long>(step),
              printable(decode_ids(run_, stream.tokens())).c_str());
  std::fflush(stdout);
}

}  // namespace uwaga::apps
