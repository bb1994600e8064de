#pragma once
// Every attention of one translation. The produced words are teacher-forced through the model
// once more, keeping the weights, so decoder position t reads word t of [BOS, produced…] and is
// the query that predicted produced word t:
//   encoder        self-attention among the source words                 per layer (h, S, S)
//   decoder_self   causal self-attention among the decoder's inputs      per layer (h, T, T)
//   cross          the decoder's queries over the encoder's output       per layer (h, T, S)
// uwaga-translate draws `cross` (translate --attention) and all three (explore).
#include <string>
#include <vector>

#include "apps/translate/attention_heatmap.h"
#include "apps/translate/translate_run_config.h"
#include "nn/decoding.h"
#include "nn/seq2seq_transformer.h"

namespace uwaga::apps {

struct TranslationAttention {
  std::vector<std::string> source;         // S: the English words and the EOS the encoder reads
  std::vector<std::string> decoder_input;  // T: BOS and the produced words but the last
  std::vector<std::string> produced;       // T: the Spanish words, and EOS when it finished
  std::vector<Tensor> encoder, decoder_self, cross;

  CrossAttention cross_attention() const { return {source, produced, cross}; }
};

// `source`: the ids the model translated (EOS last); `translation`: what it produced.
TranslationAttention translation_attention(nn::Seq2SeqTransformer& model,
                                           const TranslateRunConfig& run,
                                           const std::vector<std::int64_t>& source,
                                           const nn::Hypothesis& translation);

}  // namespace uwaga::apps
