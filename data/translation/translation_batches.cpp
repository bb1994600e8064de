#include "data/translation/translation_batches.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/random.h"
#include "nn/pad_sequences.h"

namespace uwaga {
namespace {

constexpr std::int64_t kBatchesPerWindow = 50;  // length-sorting window, in batches

}  // namespace

std::vector<std::int64_t> encode_source(const std::string& english, const Vocabulary& vocab,
                                        std::vector<std::string>* unknown) {
  std::vector<std::int64_t> ids;
  for (const std::string& w : tokenize(english)) {
    ids.push_back(vocab.id(w));
    if (ids.back() == Vocabulary::kUnk && unknown) unknown->push_back(w);
  }
  ids.push_back(Vocabulary::kEos);
  return ids;
}

std::vector<EncodedPair> encode_pairs(const std::vector<TranslationPair>& pairs,
                                      const Vocabulary& src_vocab, const Vocabulary& tgt_vocab,
                                      std::int64_t max_length) {
  std::vector<EncodedPair> out;
  out.reserve(pairs.size());
  for (const TranslationPair& p : pairs) {
    EncodedPair e{encode_source(p.english, src_vocab), tgt_vocab.encode(p.spanish, true)};
    const auto longest = static_cast<std::int64_t>(std::max(e.source.size(), e.target.size() - 1));
    if (longest > max_length)
      fail("the pair '", p.english, "' => '", p.spanish, "' needs ", longest,
           " positions, more than max_length ", max_length, "; raise --max-length");
    out.push_back(std::move(e));
  }
  return out;
}

Batch make_translation_batch(const std::vector<EncodedPair>& pairs,
                             const std::vector<std::int64_t>& index, std::int64_t pad) {
  std::vector<std::vector<std::int64_t>> src, in, out;
  for (std::int64_t i : index) {
    const EncodedPair& p = pairs.at(static_cast<std::size_t>(i));
    src.push_back(p.source);
    in.emplace_back(p.target.begin(), p.target.end() - 1);
    out.emplace_back(p.target.begin() + 1, p.target.end());
  }
  return {{nn::pad_sequences(src, pad), nn::pad_sequences(in, pad)}, nn::pad_sequences(out, pad)};
}

TranslationBatches::TranslationBatches(std::vector<EncodedPair> pairs, std::int64_t batch_size,
                                       std::uint64_t seed, std::int64_t pad)
    : pairs_(std::move(pairs)), batch_size_(batch_size), seed_(seed), pad_(pad) {
  if (batch_size_ < 1) fail("TranslationBatches: batch_size must be at least 1, got ", batch_size_);
}

std::int64_t TranslationBatches::batches_per_epoch() const {
  return static_cast<std::int64_t>(pairs_.size()) / batch_size_;
}

void TranslationBatches::begin_epoch(std::int64_t epoch) {
  // A generator of its own per epoch: batch i of epoch e depends only on (seed, e).
  Generator gen(seed_ ^ (0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(epoch + 1)));
  std::vector<std::int64_t> order(pairs_.size());
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[gen.below(i + 1)]);
  const std::int64_t B = batch_size_, n_batches = batches_per_epoch();
  order.resize(static_cast<std::size_t>(n_batches * B));  // drop the last, partial batch
  auto length = [&](std::int64_t i) { return pairs_[i].source.size() + pairs_[i].target.size(); };
  batches_.clear();
  for (std::int64_t w = 0; w < n_batches; w += kBatchesPerWindow) {
    auto first = order.begin() + w * B;
    auto last = order.begin() + std::min(n_batches, w + kBatchesPerWindow) * B;
    std::stable_sort(first, last, [&](std::int64_t a, std::int64_t b) {
      return length(a) < length(b);
    });
    for (auto it = first; it != last; it += B) batches_.emplace_back(it, it + B);
  }
  for (std::size_t i = batches_.size() - 1; i > 0; --i)
    std::swap(batches_[i], batches_[gen.below(i + 1)]);
}

Batch TranslationBatches::batch(std::int64_t index) {
  if (index < 0 || index >= static_cast<std::int64_t>(batches_.size()))
    fail("TranslationBatches: batch ", index, " of ", batches_.size(), " (begin_epoch first)");
  return make_translation_batch(pairs_, batches_[static_cast<std::size_t>(index)], pad_);
}

}  // namespace uwaga
