#include "nn/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "core/graph.h"
#include "core/shape_ops.h"

namespace uwaga::nn {

void SamplingOptions::validate(std::int64_t vocab) const {
  if (!(temperature >= 0) || !std::isfinite(temperature))
    fail("--temperature must be a finite number >= 0 (0: greedy), got ", temperature);
  if (top_k < 0 || top_k > vocab)
    fail("--top-k must be from 1 to the vocabulary's ", vocab, " tokens, got ", top_k);
  if (!(top_p > 0 && top_p <= 1)) fail("--top-p must be in (0, 1], got ", top_p);
}

std::int64_t sample_token(const std::vector<double>& z, const SamplingOptions& o,
                          Generator& gen) {
  const auto V = static_cast<std::int64_t>(z.size());
  // NaN is refused rather than read as −inf: it means the model's arithmetic broke down (an
  // overflow in a layer), and text drawn from the rest would hide that. Besides, `>` on NaN is no
  // strict weak order, which the sort needs. +inf takes all the probability (exp(inf − inf) is
  // NaN), so it is refused too; −inf is a token ruled out.
  for (std::int64_t i = 0; i < V; ++i)
    if (std::isnan(z[i]) || z[i] == INFINITY)
      fail("sample_token: the logit of token ", i, " is ", std::isnan(z[i]) ? "NaN" : "inf",
           " (the model's output is not a number: its weights or activations overflowed)");
  // Token ids from the most probable down; equal logits keep the lower id first.
  std::vector<std::int64_t> order(z.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return z[a] > z[b];
  });
  if (V == 0 || z[order[0]] == -INFINITY)
    fail("sample_token: every logit is -inf (of ", V, " tokens): no token can be drawn");
  if (o.temperature == 0 || o.top_k == 1) return order[0];  // greedy

  // Top-k: only the k most probable may be drawn.
  const std::int64_t k = o.top_k > 0 ? std::min(o.top_k, V) : V;
  // p_i ∝ exp((z_i − z_max) / τ) over the k kept, z_max subtracted so that exp cannot overflow.
  std::vector<double> p(k);
  double total = 0;
  for (std::int64_t i = 0; i < k; ++i)
    total += p[i] = std::exp((z[order[i]] - z[order[0]]) / o.temperature);
  // Top-p: the shortest run from the top whose probabilities reach top_p of the total.
  std::int64_t kept = k;
  if (o.top_p < 1) {
    double sum = 0;
    for (std::int64_t i = 0; i < k; ++i) {
      sum += p[i];
      if (sum >= o.top_p * total) {
        kept = i + 1;
        break;
      }
    }
  }
  const double kept_total = std::accumulate(p.begin(), p.begin() + kept, 0.0);
  // One draw u ∈ [0, kept_total): the token whose slice of the line holds u.
  const double u = gen.uniform() * kept_total;
  double edge = 0;
  for (std::int64_t i = 0; i < kept; ++i) {
    edge += p[i];
    if (u < edge) return order[i];
  }
  return order[kept - 1];  // u within rounding of the end
}

TokenStream::TokenStream(Gpt& model, std::vector<std::int64_t> prompt,
                         const SamplingOptions& options, std::uint64_t seed, bool use_cache)
    : model_(model),
      options_(options),
      gen_(seed),
      use_cache_(use_cache),
      was_training_(model.is_training()),
      tokens_(std::move(prompt)) {
  if (tokens_.empty()) fail("TokenStream: the prompt is empty; it needs at least one token");
  options_.validate(model.config.vocab);
  model_.eval();
}

TokenStream::~TokenStream() { model_.train(was_training_); }

std::vector<double> TokenStream::next_logits() {
  NoGradGuard no_grad;
  const auto T = static_cast<std::size_t>(model_.config.context);
  if (tokens_.size() - start_ > T) {  // the window is full: rebuild it from its last half
    start_ = tokens_.size() - (T + 1) / 2;
    cache_.clear();
  }
  auto ids_of = [](auto begin, auto end) {
    std::vector<std::int64_t> ids(begin, end);
    return Tensor::from_indices(ids, {1, static_cast<std::int64_t>(ids.size())});
  };
  const auto window = tokens_.begin() + static_cast<std::ptrdiff_t>(start_);
  if (!use_cache_) {  // the whole window, every step
    Tensor logits = model_.forward(ids_of(window, tokens_.end()));  // (1, n, V)
    const std::int64_t n = logits.size(1);
    return slice(logits, 1, n - 1, n).to_vector();
  }
  // The cache holds tokens_[start_ …] but the last: read only what it lacks.
  const auto cached = static_cast<std::ptrdiff_t>(cache_.length());
  return model_.forward_cached(ids_of(window + cached, tokens_.end()), cache_).to_vector();
}

std::int64_t TokenStream::next() {
  const std::int64_t token = sample_token(next_logits(), options_, gen_);
  tokens_.push_back(token);
  return token;
}

}  // namespace uwaga::nn
