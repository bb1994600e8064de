#pragma once
// Writing text with a trained GPT: predict a distribution over the next token, draw one, append
// it, repeat (autoregressive generation, SEEDS §5).
//
// Drawing the next token from the logits z (V):
//   temperature τ   p ∝ exp(z / τ): τ < 1 sharpens the distribution, τ > 1 flattens it, and
//                   τ = 0 is its limit, the most probable token (greedy; lowest id on ties)
//   top-k           only the k most probable tokens may be drawn (k = 1 is greedy too)
//   top-p           only the smallest set of most probable tokens whose probabilities sum to at
//                   least p ("nucleus sampling"); p = 1 keeps every token
// The kept probabilities are renormalised and one token is drawn with a seeded Generator, so the
// same seed writes the same text.
//
// The context window. The model has learned positions 0 … T−1 only, so it reads at most the
// last T tokens. With the key/value cache each new token costs one row per layer; when the
// window is full the cache is rebuilt from the last ⌈T/2⌉ tokens (a fresh pass over them, as
// the positions have all moved), and then fills up again. Rebuilding every step from the last T
// tokens would give the model a little more context but cost a full pass per token. Without
// the cache, generation makes the same choice of window and recomputes the whole window every
// step — the reference the cached path is tested against, token for token.
#include <cstdint>
#include <vector>

#include "core/random.h"
#include "nn/gpt.h"

namespace uwaga::nn {

struct SamplingOptions {
  double temperature = 1.0;  // τ ≥ 0; 0: greedy
  std::int64_t top_k = 0;    // 0: off, else 1 … V
  double top_p = 1.0;        // in (0, 1]; 1: off

  // Throws an Error naming the flag (--temperature, --top-k, --top-p) that cannot work with a
  // vocabulary of `vocab` tokens.
  void validate(std::int64_t vocab) const;
};

// One token drawn from `logits` (a row of V scores) as above. A logit of −inf rules its token out;
// NaN or +inf is refused, naming the token (a model whose arithmetic overflowed), and so is a row
// of −inf only.
std::int64_t sample_token(const std::vector<double>& logits, const SamplingOptions& options,
                          Generator& gen);

// Generation from a prompt, one token per next(). The model runs in eval mode without a graph
// (its training flag is restored when the TokenStream ends).
class TokenStream {
 public:
  // The prompt must hold at least one token.
  TokenStream(Gpt& model, std::vector<std::int64_t> prompt, const SamplingOptions& options,
              std::uint64_t seed, bool use_cache = true);
  ~TokenStream();
  TokenStream(const TokenStream&) = delete;
  TokenStream& operator=(const TokenStream&) = delete;

  std::int64_t next();  // draws one more token and appends it to tokens()
  const std::vector<std::int64_t>& tokens() const { return tokens_; }  // prompt + generated

 private:
  std::vector<double> next_logits();  // of the token after tokens_, reading the window

  Gpt& model_;
  SamplingOptions options_;
  Generator gen_;
  bool use_cache_;
  bool was_training_;
  std::vector<std::int64_t> tokens_;
  std::size_t start_ = 0;  // the window the model reads: tokens_[start_ …]
  KvCache cache_;          // keys and values of tokens_[start_ … start_ + cache_.length())
};

}  // namespace uwaga::nn
