#include "apps/bench/translator_throughput.h"

#include "apps/translate/translate_run_config.h"
#include "apps/translate/translate_training.h"
#include "core/uwaga.h"
#include "nn/seq2seq_transformer.h"
#include "optim/adam.h"
#include "optim/clip.h"

namespace uwaga::apps {

using nlohmann::json;

namespace {

// A (B, L) int64 tensor as B rows of ids.
json rows_of(const Tensor& ids, std::int64_t B) {
  const std::vector<std::int64_t> flat = ids.to_indices();
  const std::size_t L = flat.size() / static_cast<std::size_t>(B);
  json rows = json::array();
  for (std::size_t r = 0; r < static_cast<std::size_t>(B); ++r)
    rows.push_back(std::vector<std::int64_t>(flat.begin() + r * L, flat.begin() + (r + 1) * L));
  return rows;
}

// The default preset as uwaga-translate train builds it: corpus, vocabularies, model, the
// first epoch's batches, the label-smoothed loss.
struct DefaultPreset {
  explicit DefaultPreset(optim::DataParallelOptions parallel)
      : run(vocabularies(translate_preset("default"), corpus)),
        gen(run.seed),
        model(run.model, gen),
        batches(encode_pairs(corpus.train, run), run.batch_size, run.seed, run.model.pad_id),
        loss({run.model.pad_id, run.label_smoothing}),
        parallel(model, parallel) {
    batches.begin_epoch(0);
  }
  static TranslateRunConfig vocabularies(TranslateRunConfig run, const TranslationCorpus& corpus) {
    build_vocabularies(run, corpus);
    return run;
  }
  const TranslationCorpus corpus = generate_translation_corpus(translate_preset("default").corpus);
  TranslateRunConfig run;
  Generator gen;
  nn::Seq2SeqTransformer model;
  TranslationBatches batches;
  nn::CrossEntropyLoss loss;
  optim::DataParallel parallel;
};

}  // namespace

json translator_batches(std::int64_t count) {
  DefaultPreset p({1, 0});
  const TranslateRunConfig& run = p.run;
  const nn::Seq2SeqConfig& m = run.model;
  json j = {{"preset", run.preset},           {"src_vocab", m.src_vocab},
            {"tgt_vocab", m.tgt_vocab},       {"pad_id", m.pad_id},
            {"dim", m.dim},                   {"heads", m.heads},
            {"mlp_dim", m.mlp_dim},           {"encoder_layers", m.encoder_layers},
            {"decoder_layers", m.decoder_layers}, {"max_length", m.max_length},
            {"positions", m.positions},       {"dropout", m.dropout},
            {"label_smoothing", run.label_smoothing}, {"clip_norm", run.clip_norm},
            {"lr", run.lr},                   {"weight_decay", run.weight_decay},
            {"batch_size", run.batch_size}};
  json batches = json::array();
  count = std::min(count, p.batches.batches_per_epoch());
  for (std::int64_t i = 0; i < count; ++i) {
    const Batch b = p.batches.batch(i);  // {src, tgt_in}, tgt_out
    const std::int64_t B = b.rows();
    batches.push_back({{"src", rows_of(b.inputs[0], B)},
                       {"tgt_in", rows_of(b.inputs[1], B)},
                       {"tgt_out", rows_of(b.targets, B)}});
  }
  j["batches"] = batches;
  return j;
}

json bench_translator(std::int64_t count, std::int64_t micro_batch, const BenchOptions& o,
                      bool train) {
  const long rss_before_model = peak_rss_kb();
  DefaultPreset p({num_threads(), micro_batch});
  const TranslateRunConfig& run = p.run;
  count = std::min(count, p.batches.batches_per_epoch());
  double words_per_step = 0;
  for (std::int64_t i = 0; i < count; ++i) words_per_step += p.loss.count(p.batches.batch(i).targets);
  words_per_step /= static_cast<double>(count);
  // As uwaga-translate: β2 = 0.98 and ε = 1e-9 (Vaswani et al.), no decay on vectors/embeddings.
  optim::AdamW opt(optim::make_param_groups(p.model, run.weight_decay), {run.lr, 0.9, 0.98, 1e-9});
  const std::vector<Tensor> params = p.model.parameters();
  std::int64_t step = 0;
  std::vector<double> gradient_s, update_s;
  double sink = 0;
  std::function<void()> call;
  if (train) {
    p.model.train();
    call = [&] {  // what the trainer does each step
      opt.zero_grad();
      p.model.zero_grad();
      const auto t0 = Clock::now();
      sink += p.parallel.gradient(p.batches.batch(step++ % count), p.loss).loss;
      const auto t1 = Clock::now();
      optim::clip_grad_norm(params, run.clip_norm);
      opt.step();
      gradient_s.push_back(std::chrono::duration<double>(t1 - t0).count());
      update_s.push_back(seconds_since(t1));
    };
  } else {
    p.model.eval();
    call = [&] {
      NoGradGuard no_grad;
      const Batch b = p.batches.batch(step++ % count);
      sink += p.model.forward_batch(b.inputs).data<float>()[0];
    };
  }
  int calls = 0;
  std::vector<double> cpu_per_step;
  const std::vector<double> per_step = time_calls(call, o, &calls, &cpu_per_step);
  const double B = static_cast<double>(run.batch_size);
  std::vector<double> sentences_per_s, words_per_s, sentences_per_cpu_s;
  for (double s : per_step) {
    sentences_per_s.push_back(B / s);
    words_per_s.push_back(words_per_step / s);
  }
  for (double s : cpu_per_step) sentences_per_cpu_s.push_back(B / s);
  json j = header(train ? "translate" : "translate_eval");
  j["batch"] = run.batch_size;
  j["micro_batch"] = micro_batch;
  j["batches_cycled"] = count;
  j["warmup_steps"] = o.warmup;
  j["steps_per_repeat"] = calls;
  j["sentences_per_s"] = sentences_per_s;
  j["median_sentences_per_s"] = median(sentences_per_s);
  j["target_words_per_s"] = words_per_s;
  j["median_target_words_per_s"] = median(words_per_s);
  j["sentences_per_cpu_s"] = sentences_per_cpu_s;
  if (train) {
    auto timed = [&](std::vector<double>& v) {  // the timed steps only: warm-up ones come first
      v.erase(v.begin(), v.begin() + std::min<std::size_t>(o.warmup, v.size()));
      return median(v) * 1e3;
    };
    j["phase_ms"] = {{"gradient", timed(gradient_s)}, {"optimizer", timed(update_s)}};
  }
  j["checksum"] = sink;
  j["parameters"] = p.model.num_parameters();
  j["rss_before_model_kb"] = rss_before_model;
  j["peak_rss_kb"] = peak_rss_kb();
  return j;
}

}  // namespace uwaga::apps
