#include "data/translation/bleu.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"

namespace uwaga {
namespace {

// How often each n-gram of `words` occurs.
std::map<TokenList, std::int64_t> ngram_counts(const TokenList& words, std::size_t n) {
  std::map<TokenList, std::int64_t> counts;
  for (std::size_t i = 0; i + n <= words.size(); ++i)
    ++counts[TokenList(words.begin() + static_cast<std::ptrdiff_t>(i),
                       words.begin() + static_cast<std::ptrdiff_t>(i + n))];
  return counts;
}

}  // namespace

BleuScore corpus_bleu(const std::vector<TokenList>& candidates,
                      const std::vector<TokenList>& references, int max_order) {
  if (candidates.size() != references.size())
    fail("corpus_bleu: ", candidates.size(), " candidates but ", references.size(),
         " references; expected one reference per candidate");
  if (max_order < 1 || max_order > 4)
    fail("corpus_bleu: max_order must be 1 to 4, got ", max_order);

  std::int64_t matches[4] = {0, 0, 0, 0}, totals[4] = {0, 0, 0, 0};
  BleuScore score;
  for (std::size_t s = 0; s < candidates.size(); ++s) {
    score.candidate_length += static_cast<std::int64_t>(candidates[s].size());
    score.reference_length += static_cast<std::int64_t>(references[s].size());
    for (int n = 1; n <= max_order; ++n) {
      const auto reference = ngram_counts(references[s], static_cast<std::size_t>(n));
      for (const auto& [ngram, count] : ngram_counts(candidates[s], static_cast<std::size_t>(n))) {
        const auto it = reference.find(ngram);
        matches[n - 1] += std::min(count, it == reference.end() ? 0 : it->second);  // clipped
        totals[n - 1] += count;
      }
    }
  }
  if (score.candidate_length == 0) return score;  // nothing translated: BLEU 0

  double log_sum = 0;
  int orders = 0;
  bool some_zero = false;
  for (int n = 0; n < max_order; ++n) {
    if (totals[n] == 0) continue;  // no candidate has n+1 words: the order says nothing
    score.precisions[n] = static_cast<double>(matches[n]) / static_cast<double>(totals[n]);
    if (matches[n] == 0) some_zero = true;
    else log_sum += std::log(score.precisions[n]);
    ++orders;
  }
  const auto c = static_cast<double>(score.candidate_length);
  const auto r = static_cast<double>(score.reference_length);
  score.brevity_penalty = c > r ? 1.0 : std::exp(1.0 - r / c);
  score.bleu = some_zero ? 0.0 : score.brevity_penalty * std::exp(log_sum / orders);
  return score;
}

}  // namespace uwaga
