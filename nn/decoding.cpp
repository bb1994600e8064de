#include "nn/decoding.h"

#include <algorithm>
#include <cmath>

#include "core/graph.h"
#include "core/indexing.h"
#include "nn/inference_scope.h"
#include "nn/pad_sequences.h"

namespace uwaga::nn {
namespace {

// Whether word v may be output number step + 1. BOS and PAD are never words of a translation
// (no training target holds them), and EOS may not come first: every target sentence of training
// has a word, while an undertrained model can give the empty sentence a higher probability than
// any real one (one log-probability against a sum of several), which a wide enough beam finds.
// Scores stay the model's log-probabilities: the excluded words are skipped, not renormalised.
bool may_produce(std::int64_t v, std::int64_t step, const DecodingOptions& o,
                 std::int64_t pad_id) {
  if (v == o.eos_id) return step > 0;
  return v != o.bos_id && v != pad_id;
}

void check_options(const DecodingOptions& o, const Seq2SeqTransformer& model) {
  const std::int64_t V = model.config.tgt_vocab;
  if (o.bos_id < 0 || o.bos_id >= V || o.eos_id < 0 || o.eos_id >= V)
    fail("decoding: bos_id ", o.bos_id, " and eos_id ", o.eos_id,
         " must be ids of the target vocabulary (", V, " words)");
  if (o.max_length < 0) fail("decoding: max_length must be >= 0, got ", o.max_length);
  if (o.beam < 1) fail("decoding: the beam width must be at least 1, got ", o.beam);
  if (!(o.length_penalty >= 0) || !std::isfinite(o.length_penalty))
    fail("decoding: the length penalty must be a finite number ≥ 0, got ", o.length_penalty);
  bool has_word = false;
  for (std::int64_t v = 0; v < V; ++v)
    has_word = has_word || may_produce(v, 0, o, model.config.pad_id);
  if (!has_word)
    fail("decoding: the target vocabulary of ", V, " ids has no word besides PAD (",
         model.config.pad_id, "), BOS (", o.bos_id, ") and EOS (", o.eos_id, ")");
}

void check_source(const std::vector<std::int64_t>& source, const Seq2SeqTransformer& model) {
  if (source.empty()) fail("decoding: a source needs at least one id (e.g. EOS)");
  if (static_cast<std::int64_t>(source.size()) > model.config.max_length)
    fail("decoding: a source of ", source.size(), " ids is longer than the model's max_length ",
         model.config.max_length);
}

// The greedy choice: the most probable word that may be produced, the lowest id on ties.
std::int64_t argmax(const std::vector<double>& lp, std::int64_t step, const DecodingOptions& o,
                    std::int64_t pad_id) {
  std::int64_t best = -1;
  for (std::size_t i = 0; i < lp.size(); ++i) {
    const auto v = static_cast<std::int64_t>(i);
    if (may_produce(v, step, o, pad_id) && (best < 0 || lp[i] > lp[best])) best = v;
  }
  return best;
}

}  // namespace

std::vector<double> log_probabilities(const Tensor& logits, std::int64_t row) {
  // log p_v = z_v − max z − log Σ_u exp(z_u − max z)
  check_float(logits, "log_probabilities");
  if (logits.dim() != 2 || logits.size(1) < 1)
    fail("log_probabilities: logits ", shape_str(logits.shape()),
         " should be (rows, V) with V >= 1");
  if (row < 0 || row >= logits.size(0))
    fail("log_probabilities: row ", row, " is out of range for logits ",
         shape_str(logits.shape()), " (", logits.size(0), " rows)");
  const std::int64_t V = logits.size(-1);
  std::vector<double> lp(static_cast<std::size_t>(V));
  dispatch_float(logits.dtype(), "log_probabilities", [&](auto tag) {
    using T = decltype(tag);
    const T* z = logits.data<T>() + row * V;
    double top = z[0];
    for (std::int64_t v = 1; v < V; ++v) top = std::max(top, static_cast<double>(z[v]));
    double total = 0;
    for (std::int64_t v = 0; v < V; ++v) total += std::exp(static_cast<double>(z[v]) - top);
    const double log_total = std::log(total);
    for (std::int64_t v = 0; v < V; ++v) lp[v] = static_cast<double>(z[v]) - top - log_total;
  });
  return lp;
}

std::int64_t decoding_length_bound(const Seq2SeqTransformer& model, std::int64_t source_length,
                                   const DecodingOptions& options) {
  const std::int64_t wanted = options.max_length > 0 ? options.max_length : 2 * source_length + 10;
  return std::max<std::int64_t>(1, std::min(wanted, model.config.max_length));
}

std::vector<Hypothesis> greedy_decode(Seq2SeqTransformer& model,
                                      const std::vector<std::vector<std::int64_t>>& sources,
                                      const DecodingOptions& options) {
  check_options(options, model);
  for (const auto& s : sources) check_source(s, model);
  std::vector<Hypothesis> out(sources.size());
  if (sources.empty()) return out;
  InferenceScope scope(model);

  Tensor src = pad_sequences(sources, model.config.pad_id);  // (B, S)
  Tensor memory = model.encode(src);                         // (B, S, D)
  Tensor src_padding = model.padding_mask(src);              // (B, S)
  std::vector<std::int64_t> bound(sources.size());
  std::vector<std::vector<std::int64_t>> prefix(sources.size(), {options.bos_id});
  std::vector<std::int64_t> active;  // sentences still being decoded
  for (std::size_t b = 0; b < sources.size(); ++b) {
    bound[b] = decoding_length_bound(model, static_cast<std::int64_t>(sources[b].size()), options);
    active.push_back(static_cast<std::int64_t>(b));
  }

  Tensor active_memory = memory, active_padding = src_padding;
  while (!active.empty()) {
    std::vector<std::vector<std::int64_t>> rows;
    for (std::int64_t b : active) rows.push_back(prefix[b]);
    Tensor logits = model.decode_last(pad_sequences(rows, model.config.pad_id), active_memory,
                                      active_padding);  // (active, V)
    std::vector<std::int64_t> still;
    for (std::size_t i = 0; i < active.size(); ++i) {
      const std::int64_t b = active[i];
      const std::vector<double> lp = log_probabilities(logits, static_cast<std::int64_t>(i));
      const auto step = static_cast<std::int64_t>(prefix[b].size()) - 1;
      const std::int64_t next = argmax(lp, step, options, model.config.pad_id);
      out[b].score += lp[next];
      prefix[b].push_back(next);
      if (next == options.eos_id) {
        out[b].finished = true;
      } else {
        out[b].tokens.push_back(next);
        if (static_cast<std::int64_t>(out[b].tokens.size()) < bound[b]) still.push_back(b);
      }
    }
    if (still.size() != active.size() && !still.empty()) {
      // Drop the finished sentences from the batch: their memory rows are no longer needed.
      Tensor index = Tensor::from_indices(still, {static_cast<std::int64_t>(still.size())});
      active_memory = index_select(memory, 0, index);
      active_padding = index_select(src_padding, 0, index);
    }
    active = std::move(still);
  }
  return out;
}

double length_normalized_score(const Hypothesis& h, double length_penalty) {
  if (length_penalty == 0) return h.score;
  return h.score / std::pow(ranked_length(h), length_penalty);
}

double ranked_length(const Hypothesis& h) {
  return std::max(static_cast<double>(h.tokens.size() + (h.finished ? 1 : 0)), 1.0);
}

bool ranks_above(double score_a, double length_a, double score_b, double length_b,
                 double length_penalty) {
  if (length_penalty == 0 || length_a == length_b || score_a == 0 || score_b == 0)
    return score_a > score_b;  // the same order as score / length^α: no division needed
  // a / La^α > b / Lb^α with a, b < 0  ⟺  log(−a) − log(−b) < α (log La − log Lb). In logs no
  // power overflows: 32^α is infinite from α ≈ 205 on, and every quotient would then be −0.
  return std::log(-score_a) - std::log(-score_b) <
         length_penalty * (std::log(length_a) - std::log(length_b));
}

Hypothesis beam_search(Seq2SeqTransformer& model, const std::vector<std::int64_t>& source,
                       const DecodingOptions& options) {
  check_options(options, model);
  check_source(source, model);
  InferenceScope scope(model);
  // The beam is capped at the target vocabulary size V, so any K ≥ V decodes exactly as K = V.
  // The cap is a choice, not an equivalence (K = V + 1 would keep one more prefix from the second
  // word on): every prefix kept adds V candidates per step, and an uncapped K = 10¹² let the beam
  // grow V-fold per step until memory ran out, while K = V already keeps every first word.
  const std::int64_t K = std::min(options.beam, model.config.tgt_vocab);
  const std::int64_t bound =
      decoding_length_bound(model, static_cast<std::int64_t>(source.size()), options);

  Tensor src = pad_sequences({source}, model.config.pad_id);  // (1, S)
  Tensor memory = model.encode(src);                          // (1, S, D)

  struct Beam {
    std::vector<std::int64_t> prefix;  // BOS y_1 … y_t
    double score;
  };
  struct Candidate {
    double score, step;  // total and this step's log-probability
    std::int64_t beam, token;
  };
  // Best first: total score, then the step's log-probability, then beam, then word id.
  auto better = [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.step != b.step) return a.step > b.step;
    if (a.beam != b.beam) return a.beam < b.beam;
    return a.token < b.token;
  };

  // Whether finished (or truncated) sentence a ranks above b: score / |y|^α, compared in logs.
  auto above = [&](const Hypothesis& a, const Hypothesis& b) {
    return ranks_above(a.score, ranked_length(a), b.score, ranked_length(b),
                       options.length_penalty);
  };

  std::vector<Beam> alive = {{{options.bos_id}, 0.0}};
  std::vector<Hypothesis> finished;
  for (std::int64_t step = 0; step < bound && !alive.empty(); ++step) {
    std::vector<std::vector<std::int64_t>> rows;
    for (const Beam& beam : alive) rows.push_back(beam.prefix);
    const auto n = static_cast<std::int64_t>(alive.size());
    Tensor beam_memory = index_select(memory, 0, Tensor::from_indices(
                                                     std::vector<std::int64_t>(n, 0), {n}));
    Tensor logits = model.decode_last(pad_sequences(rows, model.config.pad_id), beam_memory,
                                      Tensor());  // (n, V); one source: no padding
    std::vector<Candidate> candidates;
    for (std::int64_t b = 0; b < n; ++b) {
      const std::vector<double> lp = log_probabilities(logits, b);
      for (std::size_t v = 0; v < lp.size(); ++v)
        if (may_produce(static_cast<std::int64_t>(v), step, options, model.config.pad_id))
          candidates.push_back({alive[b].score + lp[v], lp[v], b, static_cast<std::int64_t>(v)});
    }
    std::sort(candidates.begin(), candidates.end(), better);

    // Walk down the ranking: candidates ending in EOS are finished; the first K others live on.
    std::vector<Beam> next;
    for (const Candidate& c : candidates) {
      if (static_cast<std::int64_t>(next.size()) == K) break;
      const Beam& parent = alive[c.beam];
      if (c.token == options.eos_id) {
        finished.push_back({{parent.prefix.begin() + 1, parent.prefix.end()}, c.score, true});
        continue;
      }
      Beam child{parent.prefix, c.score};
      child.prefix.push_back(c.token);
      next.push_back(std::move(child));
    }
    alive = std::move(next);
    if (!finished.empty()) {
      const Hypothesis* best_finished = &finished[0];
      for (const Hypothesis& h : finished)
        if (above(h, *best_finished)) best_finished = &h;
      // The best a prefix of score s ≤ 0 can still reach is s / bound^α: a sentence of `bound`
      // words (EOS included) with the score it has now.
      bool can_improve = false;
      for (const Beam& beam : alive)
        can_improve = can_improve ||
                      ranks_above(beam.score, static_cast<double>(bound), best_finished->score,
                                  ranked_length(*best_finished), options.length_penalty);
      if (!can_improve) break;
    }
  }

  // A finished sentence beats a truncated one; among equals, the one found first.
  auto best_of = [&](const std::vector<Hypothesis>& hs) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < hs.size(); ++i)
      if (above(hs[i], hs[best])) best = i;
    return hs[best];
  };
  if (!finished.empty()) return best_of(finished);
  std::vector<Hypothesis> unfinished;
  for (const Beam& beam : alive)
    unfinished.push_back({{beam.prefix.begin() + 1, beam.prefix.end()}, beam.score, false});
  if (unfinished.empty()) fail("beam_search: no hypothesis survived (empty vocabulary?)");
  return best_of(unfinished);
}

}  // namespace uwaga::nn
