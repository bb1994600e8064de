// uwaga.apps: what uwaga-vit, uwaga-translate, uwaga-gpt and uwaga-pose do, callable from Python — presets,
// training a preset (the apps' tasks under the shared Trainer), evaluation, checkpoints, translating
// a sentence and reading its cross-attention. This file wires existing pieces together exactly as
// the command-line programs do; it computes nothing itself.
#include <pybind11/stl.h>

#include <algorithm>

#include "apps/gpt/gpt_checkpoint.h"
#include "apps/gpt/gpt_run_config.h"
#include "apps/gpt/gpt_training.h"
#include "nn/gpt2_checkpoint.h"
#include "apps/pose/pose_checkpoint.h"
#include "apps/pose/pose_training.h"
#include "apps/translate/attention_heatmap.h"
#include "apps/translate/translation_attention.h"
#include "apps/translate/translate_checkpoint.h"
#include "apps/translate/translate_training.h"
#include "apps/vit/vit_training.h"
#include "apps/vit/vit_checkpoint.h"
#include "core/graph.h"
#include "core/shape_ops.h"
#include "notebooks/bindings/bindings.h"

namespace uwaga::python {
namespace {

using namespace apps;

// The trainer's options for a run from Python: quiet by default (a notebook shows the losses it
// gets back), files only when out_dir is given.
// (The run's epochs, clipping and seed are the training setup's to add.)
optim::TrainerOptions trainer_options(std::int64_t max_steps, const std::string& out_dir,
                                      std::int64_t log_every, bool quiet) {
  optim::TrainerOptions to;
  to.max_steps = max_steps;
  to.out_dir = out_dir;
  to.log_every = log_every;
  to.quiet = quiet;
  return to;
}

// ---- uwaga-vit ----------------------------------------------------------------------------------

// A ViT and its run, as train_vit returns it and load_vit reads it; what evaluates or classifies
// takes it whole.
struct Vit {
  std::shared_ptr<nn::VisionTransformer> model;
  VitRunConfig run;             // with the normalisation measured on the training set
  optim::TrainSummary summary;  // a loaded checkpoint's is empty
};

// The checks `uwaga-vit train` makes (VitRunConfig::validate, whose messages name the flags that
// set each field, and the data's), before a bad field surfaces as someone else's error: epochs = 0
// as "WarmupCosineLr: warmup must be >= 0 steps", train_size = -5 silently as "all images".
void validate_vit_run(const VitRunConfig& run, const ImageDataset& train,
                      const ImageDataset& test) {
  run.validate();
  if (run.train_size > train.count)
    fail("train_vit: run.train_size is ", run.train_size, " but the training set has ",
         train.count, " images");
  for (const ImageDataset* data : {&train, &test})
    if (data->channels != run.model.channels || data->height != run.model.image_size ||
        data->width != run.model.image_size)
      fail("train_vit: the ", data == &train ? "training" : "test", " set has images of ",
           data->channels, "x", data->height, "x", data->width, " but run.model expects ",
           run.model.channels, "x", run.model.image_size, "x", run.model.image_size);
}

// As `uwaga-vit train` (VitTraining), on the first run.train_size images of `all_train` (all
// when 0).
Vit train_vit(VitRunConfig run, const ImageDataset& all_train, const ImageDataset& test,
                     std::int64_t max_steps, const std::string& out_dir, std::int64_t log_every,
                     bool quiet) {
  validate_vit_run(run, all_train, test);
  ImageDataset first_images;
  if (run.train_size > 0) first_images = take_first(all_train, run.train_size);
  const ImageDataset& train = run.train_size > 0 ? first_images : all_train;
  if (run.mean.empty()) {
    ChannelStats stats = channel_stats(train);
    run.mean = stats.mean;
    run.std = stats.std;
  }
  if (run.class_names.empty()) run.class_names = train.class_names;
  VitTraining training(run, train, test,
                       trainer_options(max_steps, out_dir, log_every, quiet));
  optim::TrainSummary summary = training.fit();
  training.model().eval();
  return {training.shared_model(), training.run(), summary};
}

void bind_vit_app(py::module_& m) {
  py::class_<VitRunConfig> vit_run(m, "VitRunConfig",
                                   "A uwaga-vit run: model, data, optimisation, and the recipe "
                                   "beyond shifts and flips as uwaga-vit's flags set it "
                                   "(apps/vit/vit_recipe.h).");
  bind_fields(vit_run)
      .def(py::init<>())
      .def("validate", &VitRunConfig::validate)
      .def("to_json", &VitRunConfig::to_json)
      .def("__repr__", [](const VitRunConfig& r) { return "VitRunConfig(" + r.to_json() + ")"; });
  m.def("vit_preset", &vit_preset, py::arg("name"));
  m.def("vit_loader",
        [](const VitRunConfig& run, const ImageDataset& data, bool train, std::int64_t batch_size) {
          if (run.mean.empty())
            fail("vit_loader: run.mean is empty; set run.mean and run.std from "
                 "uwaga.data.channel_stats(training images) first, as train_vit does");
          return DataLoader(data, vit_loader_options(run, train, batch_size > 0 ? batch_size
                                                                               : run.batch_size));
        },
        py::arg("run"), py::arg("data"), py::arg("train") = true, py::arg("batch_size") = 0,
        py::keep_alive<0, 2>(),
        "The DataLoader of a run on `data`, as `uwaga-vit train` builds it: with train=True, "
        "batch(epoch, b) is the batch that training takes as step epoch * batches_per_epoch() + "
        "b, before Mixup / CutMix (augmented by the run's recipe); "
        "with train=False, the evaluation's batches. batch_size 0: the run's.");
  m.def("vit_preset_names", &vit_preset_names);
  m.def("set_dataset_geometry", &set_dataset_geometry, py::arg("run"), py::arg("dataset"));

  py::class_<ClassifierEval>(m, "ClassifierEval")
      .def_readonly("n", &ClassifierEval::n)
      .def_readonly("correct", &ClassifierEval::correct)
      .def_readonly("loss", &ClassifierEval::loss)
      .def_readonly("confusion", &ClassifierEval::confusion)
      .def("accuracy", &ClassifierEval::accuracy);
  m.def("evaluate_classifier", &evaluate_classifier, py::arg("model"), py::arg("data"),
        py::arg("run"), py::arg("batch_size") = 500, py::arg("flip") = false,
        py::call_guard<py::gil_scoped_release>(),
        "Accuracy, loss and confusion matrix (eval mode, no graph); flip: average the logits "
        "of each image and its mirror image (test-time augmentation).");

  py::class_<Vit>(m, "Vit", "A ViT (model, in eval mode) and its run; train_vit and load_vit "
                           "return one, evaluate_classifier takes one.")
      .def_readonly("model", &Vit::model)
      .def_readonly("run", &Vit::run)
      .def_readonly("summary", &Vit::summary, "The training summary (empty when loaded).")
      .def("__repr__", [](const Vit& v) {
        return "<uwaga.apps.Vit " + (v.run.preset.empty() ? "custom" : v.run.preset) + " on " +
               v.run.dataset + ", " + std::to_string(v.model->num_parameters()) + " parameters>";
      });
  m.attr("TrainedVit") = m.attr("Vit");  // the earlier name
  m.def("evaluate_classifier",
        [](const Vit& vit, const ImageDataset& data, std::int64_t batch_size, bool flip) {
          return evaluate_classifier(*vit.model, data, vit.run, batch_size, flip);
        },
        py::arg("vit"), py::arg("data"), py::arg("batch_size") = 500, py::arg("flip") = false,
        py::call_guard<py::gil_scoped_release>());
  m.def("train_vit", &train_vit, py::arg("run"), py::arg("train"), py::arg("test"),
        py::arg("max_steps") = 0, py::arg("out_dir") = "", py::arg("log_every") = 50,
        py::arg("quiet") = true, py::call_guard<py::gil_scoped_release>(),
        "Trains a run (e.g. vit_preset('mnist-tiny')) as `uwaga-vit train` does.");
  m.def("load_vit",
        [](const std::string& path) {
          LoadedVit v = load_vit(path);
          return Vit{std::shared_ptr<nn::VisionTransformer>(std::move(v.model)), v.run, {}};
        },
        py::arg("checkpoint"), "A Vit (model in eval mode, run) from a uwaga-vit checkpoint.");
}

// ---- uwaga-translate ----------------------------------------------------------------------------

// A translator and its run, as train_translator returns it and load_translator reads it; translate,
// cross_attention and evaluate_translation take it whole (or its model and run apart).
struct Translator {
  std::shared_ptr<nn::Seq2SeqTransformer> model;
  TranslateRunConfig run;       // with both vocabularies
  optim::TrainSummary summary;  // a loaded checkpoint's is empty
};

// As `uwaga-translate train` (TranslateTraining), with vocabularies from the training sentences.
Translator train_translator(TranslateRunConfig run, std::int64_t max_steps,
                                   const std::string& out_dir, std::int64_t log_every, bool quiet) {
  run.model.src_vocab = std::max<std::int64_t>(run.model.src_vocab, 4);
  run.model.tgt_vocab = std::max<std::int64_t>(run.model.tgt_vocab, 4);
  run.validate();
  const TranslationCorpus corpus = generate_translation_corpus(run.corpus);
  build_vocabularies(run, corpus);

  TranslateTraining training(run, corpus, trainer_options(max_steps, out_dir, log_every, quiet));
  optim::TrainSummary summary = training.fit();
  training.model().eval();
  return {training.shared_model(), training.run(), summary};
}

// One sentence through the model, as `uwaga-translate translate` does: the source ids
// ("w_1 … w_S EOS", cut to the model's length) and the hypothesis.
// The run's vocabularies must be the model's: a preset's run has only the 4 special tokens, and
// its ids would index past the model's embeddings or decode to "out of range" errors.
void check_vocabularies(const nn::Seq2SeqTransformer& model, const TranslateRunConfig& run,
                        const char* op) {
  const std::int64_t src = run.src_vocab.size(), tgt = run.tgt_vocab.size();
  if (src == model.config.src_vocab && tgt == model.config.tgt_vocab) return;
  const bool empty = src <= 4 && tgt <= 4;  // only PAD, BOS, EOS, UNK
  fail(op, ": the run's vocabularies have ", src, " (English) and ", tgt,
       " (Spanish) words but the model has ", model.config.src_vocab, " and ",
       model.config.tgt_vocab, "; ",
       empty ? "this run has no vocabularies" : "they belong to another run",
       "; pass the Translator that train_translator or load_translator returned");
}

std::pair<std::vector<std::int64_t>, nn::Hypothesis> translate_ids(
    nn::Seq2SeqTransformer& model, const TranslateRunConfig& run, const std::string& sentence,
    std::int64_t beam, std::int64_t max_length, double length_penalty) {
  check_vocabularies(model, run, "translate");
  if (beam < 1) fail("translate: beam must be at least 1, got ", beam);
  std::vector<std::int64_t> source = encode_source(sentence, run.src_vocab);
  if (source.size() == 1) return {source, {}};  // no words
  const auto limit = static_cast<std::size_t>(run.model.max_length);
  if (source.size() > limit) {
    source.resize(limit - 1);
    source.push_back(Vocabulary::kEos);
  }
  nn::DecodingOptions decoding;
  decoding.bos_id = Vocabulary::kBos;
  decoding.eos_id = Vocabulary::kEos;
  decoding.beam = beam;
  decoding.max_length = max_length;
  decoding.length_penalty = length_penalty;
  nn::Hypothesis h = beam == 1 ? nn::greedy_decode(model, {source}, decoding)[0]
                               : nn::beam_search(model, source, decoding);
  return {source, h};
}

std::string words_of(const std::vector<std::int64_t>& ids, const Vocabulary& vocab) {
  std::string s;
  for (std::int64_t id : ids) s += (s.empty() ? "" : " ") + vocab.word(id);
  return s;
}

std::string translate(nn::Seq2SeqTransformer& model, const TranslateRunConfig& run,
                      const std::string& sentence, std::int64_t beam, std::int64_t max_length,
                      double length_penalty) {
  return words_of(
      translate_ids(model, run, sentence, beam, max_length, length_penalty).second.tokens,
      run.tgt_vocab);
}

// The cross-attention of a translation, as `uwaga-translate translate --attention` draws it: the
// produced words are teacher-forced through the decoder once more, keeping the weights; the row
// of produced word t is the query that predicted it.
CrossAttention cross_attention(nn::Seq2SeqTransformer& model, const TranslateRunConfig& run,
                               const std::string& sentence, std::int64_t beam) {
  check_vocabularies(model, run, "cross_attention");
  const auto [source, h] = translate_ids(model, run, sentence, beam, 0, 0.0);
  if (source.size() == 1) fail("cross_attention: '", sentence, "' has no words to translate");
  return translation_attention(model, run, source, h).cross_attention();
}

void bind_translate_app(py::module_& m) {
  py::class_<TranslateRunConfig> translate_run(
      m, "TranslateRunConfig", "A uwaga-translate run: corpus, model, optimisation, vocabularies");
  bind_fields(translate_run)
      .def(py::init<>())
      .def("validate", &TranslateRunConfig::validate)
      .def("to_json", &TranslateRunConfig::to_json);
  m.def("translate_preset", &translate_preset, py::arg("name"));
  m.def("translate_preset_names", &translate_preset_names);

  py::class_<TranslationEval>(m, "TranslationEval")
      .def_readonly("n", &TranslationEval::n)
      .def_readonly("exact", &TranslationEval::exact)
      .def_readonly("bleu", &TranslationEval::bleu)
      .def_readonly("loss", &TranslationEval::loss)
      .def_readonly("token_accuracy", &TranslationEval::token_accuracy)
      .def_readonly("mistakes", &TranslationEval::mistakes)
      .def("exact_match", &TranslationEval::exact_match);
  m.def("evaluate_translation",
        [](const Translator& t, const std::vector<TranslationPair>& pairs, std::int64_t beam,
           std::int64_t limit, double length_penalty) {
          check_vocabularies(*t.model, t.run, "evaluate_translation");
          return evaluate_translation(*t.model, pairs, t.run, beam, limit, length_penalty);
        },
        py::arg("translator"), py::arg("pairs"), py::arg("beam") = 1, py::arg("limit") = 0,
        py::arg("length_penalty") = 0.0, py::call_guard<py::gil_scoped_release>(),
        "Exact match and corpus BLEU-4 of the translator's translations of `pairs`.");
  m.def("evaluate_translation",
        [](nn::Seq2SeqTransformer& model, const std::vector<TranslationPair>& pairs,
           const TranslateRunConfig& run, std::int64_t beam, std::int64_t limit,
           double length_penalty) {
          check_vocabularies(model, run, "evaluate_translation");
          return evaluate_translation(model, pairs, run, beam, limit, length_penalty);
        },
        py::arg("model"), py::arg("pairs"), py::arg("run"), py::arg("beam") = 1,
        py::arg("limit") = 0, py::arg("length_penalty") = 0.0,
        py::call_guard<py::gil_scoped_release>(),
        "Exact match and corpus BLEU-4 of the model's translations of `pairs`.");

  py::class_<Translator>(m, "Translator",
                         "A translator (model, run with its vocabularies); train_translator and "
                         "load_translator return one, translate and cross_attention take one.")
      .def_readonly("model", &Translator::model)
      .def_readonly("run", &Translator::run)
      .def_readonly("summary", &Translator::summary, "The training summary (empty when loaded).")
      .def("__repr__", [](const Translator& t) {
        return "<uwaga.apps.Translator " + (t.run.preset.empty() ? "custom" : t.run.preset) +
               ", " + std::to_string(t.run.src_vocab.size()) + " English and " +
               std::to_string(t.run.tgt_vocab.size()) + " Spanish words, " +
               std::to_string(t.model->num_parameters()) + " parameters>";
      });
  m.attr("TrainedTranslator") = m.attr("Translator");  // the earlier name
  m.def("train_translator", &train_translator, py::arg("run"), py::arg("max_steps") = 0,
        py::arg("out_dir") = "", py::arg("log_every") = 50, py::arg("quiet") = true,
        py::call_guard<py::gil_scoped_release>(),
        "Trains a run (e.g. translate_preset('tiny')) as `uwaga-translate train` does.");
  m.def("load_translator",
        [](const std::string& path) {
          LoadedTranslator t = load_translator(path);
          return Translator{std::shared_ptr<nn::Seq2SeqTransformer>(std::move(t.model)), t.run,
                            {}};
        },
        py::arg("checkpoint"), "A Translator (model in eval mode, run) from a uwaga-translate "
                               "checkpoint.");
  m.def("translate",
        [](const Translator& t, const std::string& sentence, std::int64_t beam,
           std::int64_t max_length, double length_penalty) {
          return translate(*t.model, t.run, sentence, beam, max_length, length_penalty);
        },
        py::arg("translator"), py::arg("sentence"), py::arg("beam") = 1,
        py::arg("max_length") = 0, py::arg("length_penalty") = 0.0,
        "English -> Spanish with a Translator (from train_translator or load_translator).");
  m.def("translate", &translate, py::arg("model"), py::arg("run"), py::arg("sentence"),
        py::arg("beam") = 1, py::arg("max_length") = 0, py::arg("length_penalty") = 0.0,
        "English -> Spanish, greedy (beam 1) or beam search (ranked by score / "
        "length^length_penalty).");

  py::class_<CrossAttention>(m, "CrossAttention")
      .def_readonly("source", &CrossAttention::source)
      .def_readonly("produced", &CrossAttention::produced)
      .def_readonly("layers", &CrossAttention::layers, "Per decoder layer, A (h, T, S).")
      .def("average", &CrossAttention::average, "Mean over layers and heads, row-major T x S.")
      .def("strongest_source", &CrossAttention::strongest_source);
  m.def("cross_attention",
        [](const Translator& t, const std::string& sentence, std::int64_t beam) {
          return cross_attention(*t.model, t.run, sentence, beam);
        },
        py::arg("translator"), py::arg("sentence"), py::arg("beam") = 1);
  m.def("cross_attention", &cross_attention, py::arg("model"), py::arg("run"),
        py::arg("sentence"), py::arg("beam") = 1,
        "Where the decoder looked in the source while producing each word of the translation.");
  m.def("save_attention_svg", &save_attention_svg, py::arg("attention"), py::arg("title"),
        py::arg("path"));
}

// ---- uwaga-gpt ----------------------------------------------------------------------------------

// The presets and the validation loss; a notebook builds the training from the Trainer's parts.
void bind_gpt_app(py::module_& m) {
  py::class_<GptInit> gpt_init(m, "GptInit",
                              "The model file a run started from (--init); empty: random weights.");
  bind_fields(gpt_init).def(py::init<>()).def("empty", &GptInit::empty);
  py::class_<GptRunConfig> gpt_run(m, "GptRunConfig", "A uwaga-gpt run: text, model, optimisation.");
  bind_fields(gpt_run)
      .def(py::init<>())
      .def("validate", &GptRunConfig::validate)
      .def("to_json", &GptRunConfig::to_json)
      .def("__repr__", [](const GptRunConfig& r) { return "GptRunConfig(" + r.to_json() + ")"; });
  m.def("gpt_preset", &gpt_preset, py::arg("name"));
  m.def("gpt_preset_names", &gpt_preset_names);
  m.def(
      "gpt_adam_options",
      [](const GptRunConfig& run) {
        const optim::AdamOptions a = gpt_adam_options(run);
        return py::dict(py::arg("lr") = a.lr, py::arg("betas") = py::make_tuple(a.beta1, a.beta2),
                        py::arg("eps") = a.eps);
      },
      py::arg("run"),
      "AdamW's settings as uwaga-gpt trains, as keyword arguments: "
      "uwaga.optim.AdamW(groups, **gpt_adam_options(run)).");

  py::class_<LanguageModelEval>(m, "LanguageModelEval")
      .def_readonly("characters", &LanguageModelEval::characters)
      .def_readonly("loss", &LanguageModelEval::loss, "mean cross-entropy, nats per character")
      .def("bits_per_character", &LanguageModelEval::bits_per_character)
      .def("perplexity", &LanguageModelEval::perplexity);
  m.def(
      "evaluate_language_model",
      [](nn::Gpt& model, const py::handle& ids, std::int64_t windows) {
        if (windows < 0) fail("evaluate_language_model: windows must be >= 0 (0: all), got ", windows);
        const std::vector<std::int64_t> text = ids_from(ids, "evaluate_language_model(ids)");
        py::gil_scoped_release release;
        return evaluate_language_model(model, text, windows);
      },
      py::arg("model"), py::arg("ids"), py::arg("windows") = 0,
      "The mean next-character loss over consecutive windows of `ids` (the first `windows`, or "
      "all), in eval mode without a graph, as `uwaga-gpt eval`.");
  m.def(
      "load_gpt2",
      [](const std::string& path) {
        py::gil_scoped_release release;
        return std::shared_ptr<nn::Gpt>(load_gpt2_within_memory(path));
      },
      py::arg("path"),
      "A GPT-2 from a Hugging Face model.safetensors (config.json beside it, or sizes from the "
      "shapes), as a uwaga.nn.Gpt in eval mode; refused up front when it cannot fit in memory, "
      "and when a tensor holds NaN or inf; its tokenizer: "
      "uwaga.data.BpeTokenizer.load('data/cache/gpt2-tokenizer').");
}

// ---- uwaga-pose ---------------------------------------------------------------------------------

// A keypoint model and its run, as train_pose returns it and load_pose reads it.
struct Pose {
  std::shared_ptr<nn::VitPose> model;
  PoseRunConfig run;
  optim::TrainSummary summary;  // a loaded checkpoint's is empty
};

// As `uwaga-pose train` (PoseTraining on the run's PoseData).
Pose train_pose(const PoseRunConfig& run, std::int64_t max_steps, const std::string& out_dir,
                std::int64_t log_every, bool quiet) {
  run.validate();
  const PoseData data(run);
  PoseTraining training(run, data, trainer_options(max_steps, out_dir, log_every, quiet));
  optim::TrainSummary summary = training.fit();
  training.model().eval();
  return {training.shared_model(), training.run(), summary};
}

PoseSample sample_of(const PoseSampleSource& source, std::int64_t i, const char* which) {
  if (i < 0 || i >= source.size)
    throw py::index_error(std::string("PoseData.") + which + "_sample: index " +
                          std::to_string(i) + " is out of range for " +
                          std::to_string(source.size) + " samples");
  return source.sample(i);
}

void bind_pose_app(py::module_& m) {
  py::class_<PoseRunConfig> pose_run(m, "PoseRunConfig",
                                     "A uwaga-pose run: data, model, optimisation.");
  bind_fields(pose_run, {"data"}, "set with set_pose_data")
      .def(py::init<>())
      .def("validate", &PoseRunConfig::validate)
      .def("to_json", &PoseRunConfig::to_json)
      .def("__repr__", [](const PoseRunConfig& r) { return "PoseRunConfig(" + r.to_json() + ")"; });
  m.def("pose_preset", &pose_preset, py::arg("name"));
  m.def("pose_preset_names", &pose_preset_names);
  m.def("set_pose_data", &set_pose_data, py::arg("run"), py::arg("data"),
        "'synthetic' (stick figures) or 'coco': the model's channels and joints, and flipping.");

  py::class_<PoseData>(m, "PoseData",
                       "The samples of a run: training (synthetic: new figures every epoch) and "
                       "validation (synthetic: the same for every run).")
      .def(py::init<const PoseRunConfig&>(), py::arg("run"))
      .def_property_readonly("skeleton", &PoseData::skeleton, py::return_value_policy::reference)
      .def_property_readonly("valid_size", [](const PoseData& d) { return d.valid.size; })
      .def_readonly("epoch_size", &PoseData::epoch_size)
      .def("valid_sample",
           [](const PoseData& d, std::int64_t i) { return sample_of(d.valid, i, "valid"); },
           py::arg("i"))
      .def("train_sample",
           [](const PoseData& d, std::int64_t i) { return sample_of(d.train, i, "train"); },
           py::arg("i"))
      .def("describe", &PoseData::describe);

  py::class_<OksApResult>(m, "OksApResult", "COCO's keypoint AP and AR (cocoeval); -1: no data.")
      .def_readonly("ap", &OksApResult::ap)
      .def_readonly("ap50", &OksApResult::ap50)
      .def_readonly("ap75", &OksApResult::ap75)
      .def_readonly("ar", &OksApResult::ar)
      .def_readonly("ap_per_threshold", &OksApResult::ap_per_threshold);
  py::class_<KeypointScores>(m, "KeypointScores")
      .def_readonly("pck", &KeypointScores::pck, "PCK@0.1 of the torso (or box)")
      .def_readonly("pck_joint", &KeypointScores::pck_joint, "per joint; -1: never visible")
      .def_readonly("oks", &KeypointScores::oks);
  py::class_<PoseEval>(m, "PoseEval")
      .def_readonly("n", &PoseEval::n)
      .def_readonly("loss", &PoseEval::loss)
      .def_readonly("model", &PoseEval::model)
      .def_readonly("mean_pose", &PoseEval::mean_pose, "with baselines=True")
      .def_readonly("brightest_pixel", &PoseEval::brightest_pixel, "with baselines=True");

  py::class_<Pose>(m, "Pose", "A keypoint model (in eval mode) and its run; train_pose and "
                              "load_pose return one.")
      .def_readonly("model", &Pose::model)
      .def_readonly("run", &Pose::run)
      .def_readonly("summary", &Pose::summary, "The training summary (empty when loaded).")
      .def("__repr__", [](const Pose& p) {
        return "<uwaga.apps.Pose " + (p.run.preset.empty() ? "custom" : p.run.preset) + ", " +
               p.run.model.decoder + " decoder, " + std::to_string(p.model->num_parameters()) +
               " parameters>";
      });
  m.def("train_pose", &train_pose, py::arg("run"), py::arg("max_steps") = 0,
        py::arg("out_dir") = "", py::arg("log_every") = 50, py::arg("quiet") = true,
        py::call_guard<py::gil_scoped_release>(),
        "Trains a run (e.g. pose_preset('stick-classic')) as `uwaga-pose train` does.");
  m.def("load_pose",
        [](const std::string& path) {
          LoadedPose p = load_pose(path);
          return Pose{std::shared_ptr<nn::VitPose>(std::move(p.model)), p.run, {}};
        },
        py::arg("checkpoint"), "A Pose (model in eval mode, run) from a uwaga-pose checkpoint.");
  m.def(
      "evaluate_pose",
      [](const Pose& p, const PoseData& data, bool baselines) {
        if (data.skeleton().num_joints() != p.model->config.joints)
          fail("evaluate_pose: the data has ", data.skeleton().num_joints(),
               " joints but the model ", p.model->config.joints);
        return evaluate_pose(*p.model, data.valid, heatmap_targets(p.run),
                             baselines ? &data.train : nullptr);
      },
      py::arg("pose"), py::arg("data"), py::arg("baselines") = false,
      py::call_guard<py::gil_scoped_release>(),
      "Loss, PCK@0.1 and OKS-AP on the validation samples, as `uwaga-pose eval` (and the mean-pose "
      "and brightest-pixel baselines' with baselines=True).");
}

}  // namespace

void bind_apps(py::module_& m) {
  bind_vit_app(m);
  bind_translate_app(m);
  bind_gpt_app(m);
  bind_pose_app(m);
}

}  // namespace uwaga::python
