#pragma once
// The picture of one translation's cross-attention: where the decoder looked in the English
// sentence while producing each Spanish word. Rows are the produced words (the last one EOS when
// the translation finished), columns the source words (with the EOS the encoder reads last);
// a cell is the weight A_ts of cross-attention, and each row sums to 1.
#include <string>
#include <vector>

#include "apps/common/token_attention_svg.h"
#include "core/tensor.h"

namespace uwaga::apps {

struct CrossAttention {
  std::vector<std::string> source;    // S column labels
  std::vector<std::string> produced;  // T row labels
  std::vector<Tensor> layers;         // per decoder layer (h, T, S)

  // The same weights as queries (produced words) over keys (source words).
  TokenAttention tokens() const { return {produced, source, layers}; }
  // The mean over all layers and heads, row-major T × S.
  std::vector<double> average() const;
  // For each produced word, the source position with the largest averaged weight.
  std::vector<std::int64_t> strongest_source() const;
};

// SVG: the average over layers and heads, large and with values; below, one small map per
// (layer, head); one colour scale for all of them (apps/common/token_attention_svg).
void save_attention_svg(const CrossAttention& attention, const std::string& title,
                        const std::string& path);

}  // namespace uwaga::apps
