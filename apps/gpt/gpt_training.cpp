#include "apps/gpt/gpt_training.h"

#include <algorithm>
#include <cmath>

#include "core/graph.h"
#include "nn/inference_scope.h"

namespace uwaga::apps {

double LanguageModelEval::bits_per_character() const {
  if (bytes == characters || bytes == 0) return loss / std::log(2.0);
  return loss * static_cast<double>(characters) / (static_cast<double>(bytes) * std::log(2.0));
}
double LanguageModelEval::perplexity() const { return std::exp(loss); }

LanguageModelEval evaluate_language_model(nn::Gpt& model, const std::vector<std::int64_t>& ids,
                                          std::int64_t windows,
                                          const std::vector<std::int64_t>& lengths) {
  const nn::InferenceScope inference(model);  // eval mode, no graph, until the return
  const std::int64_t T = model.config.context;
  std::int64_t count = consecutive_window_count(ids, T);
  if (windows > 0) count = std::min(count, windows);
  constexpr std::int64_t kEvalBatch = 32;
  const nn::CrossEntropyLoss loss;
  LanguageModelEval result;
  double loss_sum = 0;
  for (std::int64_t first = 0; first < count; first += kEvalBatch) {
    const Batch b = consecutive_windows(ids, T, first, std::min(kEvalBatch, count - first));
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

optim::AdamOptions gpt_adam_options(const GptRunConfig& run) { return {run.lr, 0.9, 0.99}; }

GptTraining::GptTraining(const GptRunConfig& run, const CharCorpus& corpus,
                         optim::TrainerOptions options)
    : Training(run,
               [&] {  // run.steps_per_epoch batches of random windows make an epoch
                 return CharWindows(corpus.train, run.batch_size, run.model.context,
                                    run.steps_per_epoch, run.seed);
               },
               nn::CrossEntropyLoss({-100, run.label_smoothing}), gpt_adam_options(run), "valid",
               std::move(options)),
      corpus_(corpus),
      token_lengths_(token_lengths(run)) {}

std::map<std::string, double> GptTraining::evaluate() {
  const LanguageModelEval e =
      evaluate_language_model(*model_, corpus_.valid, run_.eval_windows, token_lengths_);
  return {{"loss", e.loss}, {"bits_per_character", e.bits_per_character()}};
}

}  // namespace uwaga::apps
