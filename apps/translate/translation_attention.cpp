#include "apps/translate/translation_attention.h"

#include "core/graph.h"
#include "core/shape_ops.h"
#include "nn/inference_scope.h"
#include "nn/pad_sequences.h"

namespace uwaga::apps {
namespace {

// (1, h, T, S) per layer -> (h, T, S) per layer.
std::vector<Tensor> unbatched(const std::vector<Tensor>& maps) {
  std::vector<Tensor> out;
  for (const Tensor& A : maps) out.push_back(reshape(A, {A.size(1), A.size(2), A.size(3)}));
  return out;
}

}  // namespace

TranslationAttention translation_attention(nn::Seq2SeqTransformer& model,
                                           const TranslateRunConfig& run,
                                           const std::vector<std::int64_t>& source,
                                           const nn::Hypothesis& h) {
  TranslationAttention a;
  for (std::int64_t id : source) a.source.push_back(run.src_vocab.word(id));
  for (std::int64_t id : h.tokens) a.produced.push_back(run.tgt_vocab.word(id));
  if (h.finished) a.produced.push_back(run.tgt_vocab.word(Vocabulary::kEos));
  std::vector<std::int64_t> input = {Vocabulary::kBos};
  input.insert(input.end(), h.tokens.begin(), h.tokens.end());
  input.resize(a.produced.size());
  for (std::int64_t id : input) a.decoder_input.push_back(run.tgt_vocab.word(id));

  const nn::InferenceScope inference(model);  // eval mode, no graph, until the return
  model.keep_cross_attention(true);
  model.keep_self_attention(true);
  model.forward(nn::pad_sequences({source}, run.model.pad_id),
                nn::pad_sequences({input}, run.model.pad_id));
  model.keep_cross_attention(false);
  model.keep_self_attention(false);
  a.encoder = unbatched(model.encoder_attention_maps());
  a.decoder_self = unbatched(model.decoder_self_attention_maps());
  a.cross = unbatched(model.cross_attention_maps());
  return a;
}

}  // namespace uwaga::apps
