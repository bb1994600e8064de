#pragma once
// BLEU (Papineni et al., 2002): how much of a machine translation's wording the reference shares,
// corpus-wide. For n = 1…4, the modified n-gram precision
//   p_n = Σ_sentences Σ_ngrams min(count in candidate, count in reference)
//         / Σ_sentences (number of n-grams in the candidate)
// ("modified": an n-gram counts at most as often as the reference has it, so "the the the" does
// not score on "the cat"); then, with c the candidates' total length and r the references',
//   BP   = 1 if c > r, else exp(1 − r/c)        the brevity penalty: short output cannot cheat
//   BLEU = BP · exp((1/4) Σ_n log p_n)          in [0, 1]; 0 when some p_n is 0.
// Counts are summed over the corpus before dividing, so a sentence without a 4-gram match does
// not zero the score. One convention for tiny corpora: an order n for which the candidates have
// no n-gram at all (every candidate shorter than n words) is left out of the mean, so a corpus of
// three-word sentences scored against itself still gets 1. An empty candidate corpus scores 0.
#include <cstdint>
#include <string>
#include <vector>

namespace uwaga {

using TokenList = std::vector<std::string>;

struct BleuScore {
  double bleu = 0;                    // in [0, 1]
  double precisions[4] = {0, 0, 0, 0};  // p_1 … p_4 (0 where an order has no n-gram)
  double brevity_penalty = 0;         // BP
  std::int64_t candidate_length = 0;  // c
  std::int64_t reference_length = 0;  // r
};

// candidates[i] is scored against references[i] (one reference per sentence); the lists must
// have the same size. max_order is 4 for BLEU-4 (1 to 4).
BleuScore corpus_bleu(const std::vector<TokenList>& candidates,
                      const std::vector<TokenList>& references, int max_order = 4);

}  // namespace uwaga
