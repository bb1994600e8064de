#pragma once
// Attention between two sequences of tokens (words, characters) as an SVG picture: the mean over
// every layer and head, large and with its values; below, one small map per (layer, head). Rows
// are the queries (the tokens that attend), columns the keys; a cell is A_ts, each row sums to 1.
// Every map is coloured on one scale, 0 to the largest weight drawn, with a legend, so a head
// that spreads its attention evenly looks dark beside one that picks a single token.
// uwaga-translate draws its cross-attention with it, uwaga-gpt its causal self-attention.
#include <string>
#include <vector>

#include "core/tensor.h"

namespace uwaga::apps {

struct TokenAttention {
  std::vector<std::string> queries;  // T row labels
  std::vector<std::string> keys;     // S column labels
  std::vector<Tensor> layers;        // per layer, A (h, T, S)
};

// The mean over all layers and heads, row-major T × S.
std::vector<double> mean_attention(const TokenAttention& attention);

// `title` heads the picture, `subtitle` (one line) says what rows and columns are.
void save_token_attention_svg(const TokenAttention& attention, const std::string& title,
                              const std::string& subtitle, const std::string& path);

}  // namespace uwaga::apps
