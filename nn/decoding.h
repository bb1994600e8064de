#pragma once
// Decoding: turning a trained encoder–decoder into a translator. The decoder predicts one word at
// a time from the words so far (autoregressively, SEEDS §5): start from BOS, append a word, feed
// the longer prefix back in, stop at EOS or at the length bound.
//
//   greedy       at each step take the most probable word:  y_t = argmax_v log p(v | y_<t, x)
//   beam search  keep the K best prefixes by total log-probability Σ_t log p(y_t | y_<t, x);
//                extend each by every word, keep the K best of those, set aside those that end
//                in EOS; stop when the best finished sentence scores at least as well as every
//                unfinished prefix (scores only go down as words are added, so none can catch up)
//   length penalty  rank the finished sentences by score / |y|^α, |y| the words with EOS: a sum
//                of log-probabilities favours short sentences (every word lowers it); α = 1
//                ranks by the mean log-probability per word, α = 0 (the default) by the sum.
//                A prefix of score s can then at best finish at s / bound^α (s ≤ 0 only falls,
//                and the length is at most the bound), which is what the stopping rule compares.
//
// Both produce only words: never BOS or PAD, and not EOS as the first word (no translation is
// empty). Beam widths above the target vocabulary size V act as K = V.
//
// With K = 1 beam search makes exactly the greedy choices: candidates are ranked by total score,
// then by the step's own log-probability, then by word id — the same order as greedy's argmax
// (lowest id on ties), even where adding the running total rounds two scores together.
//
// Each step runs the whole decoder over the prefix (no key/value cache): O(T²) work per
// sentence, negligible for sentences of a dozen words, and the code stays that of training.
#include <cstdint>
#include <vector>

#include "nn/seq2seq_transformer.h"

namespace uwaga::nn {

struct DecodingOptions {
  std::int64_t bos_id = 1;
  std::int64_t eos_id = 2;
  // Most words generated per sentence, EOS included; 0: 2·(source length) + 10. Always capped
  // at the model's max_length.
  std::int64_t max_length = 0;
  std::int64_t beam = 1;  // K, for beam_search
  double length_penalty = 0;  // α ≥ 0, for beam_search: finished sentences rank by score / |y|^α
};

struct Hypothesis {
  std::vector<std::int64_t> tokens;  // the words produced, without BOS and EOS
  double score = 0;                  // Σ log p of the words produced, EOS included when finished
  bool finished = false;             // ended with EOS (false: stopped by the length bound)
};

// What beam search ranks finished sentences by: score / |y|^α, |y| the words produced with EOS.
// For display: with a large α, |y|^α overflows and every such quotient is −0; beam search
// compares with ranks_above instead.
double length_normalized_score(const Hypothesis& h, double length_penalty);
// |y|: the words of h, EOS included when it finished (at least 1).
double ranked_length(const Hypothesis& h);
// Whether score_a / length_a^α > score_b / length_b^α, for scores ≤ 0, compared in logarithms
// so that it stays right for any finite α ≥ 0 (for α = 0: score_a > score_b exactly).
bool ranks_above(double score_a, double length_a, double score_b, double length_b,
                 double length_penalty);

// The length bound for a source of `source_length` ids under `options`.
std::int64_t decoding_length_bound(const Seq2SeqTransformer& model, std::int64_t source_length,
                                   const DecodingOptions& options);

// Greedy decoding of a batch of sources (id sequences, without padding), batched through the
// model. The model runs in eval mode, without a graph; its training flag is restored after.
std::vector<Hypothesis> greedy_decode(Seq2SeqTransformer& model,
                                      const std::vector<std::vector<std::int64_t>>& sources,
                                      const DecodingOptions& options = {});

// Beam search with options.beam hypotheses, for one source. The best finished hypothesis, or the
// best unfinished one when none finished within the length bound.
Hypothesis beam_search(Seq2SeqTransformer& model, const std::vector<std::int64_t>& source,
                       const DecodingOptions& options = {});

// log softmax of one row of logits, in double precision: the scores both decoders rank by.
std::vector<double> log_probabilities(const Tensor& logits, std::int64_t row);

}  // namespace uwaga::nn
