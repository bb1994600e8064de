// uwaga.data: image datasets (pixels as a NumPy view), the data loader, the toy English -> Spanish
// corpus and its vocabulary, the character corpus a GPT learns from (tinyshakespeare), and the
// keypoint samples a pose model learns from (stick figures, skeletons).
#include <pybind11/stl.h>

#include "data/batch_source.h"
#include "data/translation/bleu.h"
#include "data/text/bpe_tokenizer.h"
#include "data/text/char_corpus.h"
#include "data/data_loader.h"
#include "data/datasets.h"
#include "data/images/image_dataset.h"
#include "data/pose/keypoints.h"
#include "data/text/pretokenizer.h"
#include "data/pose/stick_figures.h"
#include "data/translation/translation_corpus.h"
#include "data/translation/vocabulary.h"
#include "notebooks/bindings/bindings.h"

namespace uwaga::python {

std::vector<std::int64_t> ids_from(const py::handle& obj, const std::string& what) {
  py::array a = py::module_::import("numpy").attr("asarray")(obj);
  const char kind = a.dtype().kind();
  const bool integers = kind == 'i' || kind == 'u' || (kind == 'f' && a.size() == 0);  // [] too
  if (a.ndim() != 1 || !integers)
    throw py::type_error(what + ": expected a list or 1-D array of integer token ids, got " +
                         type_name(obj) + " that NumPy reads as " + std::to_string(a.ndim()) +
                         "-D dtype " + std::string(py::str(a.dtype())));
  return from_numpy(a, DType::Int64).to_indices();
}

py::array ids_to_numpy(const std::vector<std::int64_t>& ids) {
  return py::array_t<std::int64_t>(static_cast<py::ssize_t>(ids.size()), ids.data());
}

py::str text_of(const std::string& bytes) {
  PyObject* s =
      PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "replace");
  if (!s) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

namespace {

// A dataset directory: the one given, else where data/fetch.sh puts it in the repository.
std::string data_dir(const std::string& name, const std::string& dir) {
  return dir.empty() ? source_dir() + "/" + default_data_dir(name) : dir;
}

// A BatchSource written in Python (subclass uwaga.data.BatchSource): batches_per_epoch() (an
// int), begin_epoch(e) and batch(i) (a uwaga.data.Batch). What each returns is checked and the
// method named when it is the wrong type. The trainer runs without the GIL; each call takes it
// back.
class PyBatchSource : public BatchSource {
 public:
  std::int64_t batches_per_epoch() const override {
    py::gil_scoped_acquire gil;
    py::object n = call("batches_per_epoch");
    if (!PyIndex_Check(n.ptr()) || py::isinstance<py::bool_>(n))
      throw wrong_return("batches_per_epoch", "an int", n);
    return n.cast<std::int64_t>();
  }
  void begin_epoch(std::int64_t epoch) override {
    py::gil_scoped_acquire gil;
    call("begin_epoch", epoch);  // whatever it returns is ignored
  }
  Batch batch(std::int64_t index) override {
    py::gil_scoped_acquire gil;
    py::object r = call("batch", index);
    if (!py::isinstance<Batch>(r))
      throw wrong_return("batch", "a uwaga.data.Batch(inputs, targets)", r);
    return r.cast<Batch>();
  }

 private:
  template <class... Args>
  py::object call(const char* name, Args... args) const {
    py::function f = py::get_override(static_cast<const BatchSource*>(this), name);
    if (!f) {
      PyErr_Format(PyExc_NotImplementedError, "a BatchSource subclass must define %s()", name);
      throw py::error_already_set();
    }
    return f(args...);
  }
  static py::type_error wrong_return(const char* method, const char* expected,
                                     const py::handle& got) {
    return py::type_error("BatchSource." + std::string(method) + "() must return " + expected +
                          ", got " + type_name(got));
  }
};

void bind_batches(py::module_& m) {
  py::class_<Batch>(m, "Batch", "One step's examples, rows first: the model's inputs and the targets.")
      .def(py::init([](std::vector<Tensor> inputs, Tensor targets) {
             return Batch{std::move(inputs), std::move(targets)};
           }),
           py::arg("inputs"), py::arg("targets"))
      .def_readwrite("inputs", &Batch::inputs)
      .def_readwrite("targets", &Batch::targets)
      .def_property_readonly("rows", [](const Batch& b) { return b.rows(); });
  py::class_<BatchSource, PyBatchSource>(m, "BatchSource",
                                         "Where the Trainer gets its batches: subclass it and "
                                         "define batches_per_epoch() (an int), begin_epoch(e) and "
                                         "batch(i) (a uwaga.data.Batch).")
      .def(py::init<>())
      .def("batches_per_epoch", &BatchSource::batches_per_epoch)
      .def("begin_epoch", &BatchSource::begin_epoch, py::arg("epoch"))
      .def("batch", &BatchSource::batch, py::arg("index"));
}

void bind_images(py::module_& m) {
  py::class_<ImageDataset>(m, "ImageDataset", "Labelled images, kept as bytes.")
      .def(py::init<>())
      .def_readonly("count", &ImageDataset::count)
      .def_readonly("channels", &ImageDataset::channels)
      .def_readonly("height", &ImageDataset::height)
      .def_readonly("width", &ImageDataset::width)
      .def_readonly("labels", &ImageDataset::labels)
      .def_readonly("class_names", &ImageDataset::class_names)
      .def("__len__", [](const ImageDataset& d) { return d.count; })
      .def("images",
           [](py::object self) {
             const auto& d = self.cast<const ImageDataset&>();
             // (count, C, H, W) uint8, a view that keeps the dataset alive
             return py::array_t<std::uint8_t>({d.count, d.channels, d.height, d.width},
                                              d.pixels.data(), self);
           },
           "The pixels as a (count, C, H, W) uint8 NumPy view: no copy, and writable — writing "
           "to it changes the dataset's images.");
  m.def("dataset_names", &dataset_names);
  m.def("default_data_dir", [](const std::string& name) { return data_dir(name, ""); },
        py::arg("name"), "Where data/fetch.sh puts a dataset in this repository.");
  m.def("load_dataset",
        [](const std::string& name, bool train, const std::string& dir) {
          return load_dataset(name, data_dir(name, dir), train);
        },
        py::arg("name"), py::arg("train") = true, py::arg("dir") = "",
        "The training or test split of mnist, fashion-mnist or cifar10.");
  m.def("take_first", &take_first, py::arg("data"), py::arg("n"));
  py::class_<ChannelStats>(m, "ChannelStats")
      .def_readonly("mean", &ChannelStats::mean)
      .def_readonly("std", &ChannelStats::std);
  m.def("channel_stats", &channel_stats, py::arg("data"));

  py::class_<AugmentOptions>(m, "AugmentOptions")
      .def(py::init([](std::int64_t shift, bool flip) { return AugmentOptions::shift_flip(shift, flip); }),
           py::arg("max_shift") = 0, py::arg("horizontal_flip") = false)
      .def_readwrite("max_shift", &AugmentOptions::max_shift)
      .def_readwrite("horizontal_flip", &AugmentOptions::horizontal_flip);
  py::class_<DataLoaderOptions>(m, "DataLoaderOptions")
      .def(py::init([](std::int64_t batch_size, bool shuffle, bool drop_last, std::uint64_t seed,
                       std::vector<float> mean, std::vector<float> std, AugmentOptions augment) {
             return DataLoaderOptions{batch_size, shuffle, drop_last, seed, std::move(mean),
                                      std::move(std), augment, MixOptions{}};
           }),
           py::arg("batch_size") = 64, py::arg("shuffle") = false, py::arg("drop_last") = false,
           py::arg("seed") = 0, py::arg("mean") = std::vector<float>{},
           py::arg("std") = std::vector<float>{}, py::arg("augment") = AugmentOptions{})
      .def_readwrite("batch_size", &DataLoaderOptions::batch_size)
      .def_readwrite("shuffle", &DataLoaderOptions::shuffle)
      .def_readwrite("drop_last", &DataLoaderOptions::drop_last)
      .def_readwrite("seed", &DataLoaderOptions::seed)
      .def_readwrite("mean", &DataLoaderOptions::mean)
      .def_readwrite("std", &DataLoaderOptions::std)
      .def_readwrite("augment", &DataLoaderOptions::augment);
  py::class_<ImageBatch>(m, "ImageBatch")
      .def_readonly("images", &ImageBatch::images)
      .def_readonly("labels", &ImageBatch::labels)
      .def_readonly("indices", &ImageBatch::indices);
  // Iterating a loader yields the batches of its current epoch, then moves to the next epoch.
  py::class_<DataLoader, BatchSource>(m, "DataLoader")
      .def(py::init<const ImageDataset&, DataLoaderOptions>(), py::arg("data"),
           py::arg("options") = DataLoaderOptions(), py::keep_alive<1, 2>())
      .def("batches_per_epoch", &DataLoader::batches_per_epoch)
      .def("__len__", &DataLoader::batches_per_epoch)
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__",
           [](DataLoader& l) {
             ImageBatch b;
             if (!l.next(b)) throw py::stop_iteration();
             return b;
           })
      .def("batch",
           static_cast<ImageBatch (DataLoader::*)(std::int64_t, std::int64_t)>(&DataLoader::batch),
           py::arg("epoch"), py::arg("b"),
           "ImageBatch b of epoch `epoch`, whatever the loader's position.")
      .def("make_batch", &DataLoader::make_batch, py::arg("indices"), py::arg("epoch") = 0)
      .def("epoch_order", &DataLoader::epoch_order, py::arg("epoch"))
      .def_property_readonly("position", [](const DataLoader& l) {
        return py::make_tuple(l.position().epoch, l.position().batch);
      });
}

void bind_translation(py::module_& m) {
  py::class_<TranslationPair>(m, "TranslationPair")
      .def(py::init([](std::string en, std::string es) {
             return TranslationPair{std::move(en), std::move(es)};
           }),
           py::arg("english"), py::arg("spanish"))
      .def_readwrite("english", &TranslationPair::english)
      .def_readwrite("spanish", &TranslationPair::spanish)
      .def("__repr__", [](const TranslationPair& p) {
        return "'" + p.english + "' -> '" + p.spanish + "'";
      });
  py::class_<TranslationCorpusOptions>(m, "TranslationCorpusOptions")
      .def(py::init<>())
      .def_readwrite("seed", &TranslationCorpusOptions::seed)
      .def_readwrite("train_size", &TranslationCorpusOptions::train_size)
      .def_readwrite("valid_size", &TranslationCorpusOptions::valid_size)
      .def_readwrite("test_size", &TranslationCorpusOptions::test_size)
      .def_readwrite("valid_fraction", &TranslationCorpusOptions::valid_fraction)
      .def_readwrite("test_fraction", &TranslationCorpusOptions::test_fraction);
  py::class_<TranslationCorpus>(m, "TranslationCorpus")
      .def_readonly("train", &TranslationCorpus::train)
      .def_readonly("valid", &TranslationCorpus::valid)
      .def_readonly("test", &TranslationCorpus::test);
  m.def("generate_translation_corpus", &generate_translation_corpus,
        py::arg("options") = TranslationCorpusOptions());
  m.def("translate_sentence", &translate_sentence, py::arg("english"),
        "The grammar's own Spanish for an English sentence (the reference, not a model).");
  m.def("tokenize", &tokenize, py::arg("text"));

  py::class_<Vocabulary>(m, "Vocabulary", "Words <-> ids; 0 PAD, 1 BOS, 2 EOS, 3 UNK.")
      .def(py::init<>())
      .def_static("build", &Vocabulary::build, py::arg("sentences"), py::arg("min_count") = 1)
      .def_readonly_static("PAD", &Vocabulary::kPad)
      .def_readonly_static("BOS", &Vocabulary::kBos)
      .def_readonly_static("EOS", &Vocabulary::kEos)
      .def_readonly_static("UNK", &Vocabulary::kUnk)
      .def("__len__", &Vocabulary::size)
      .def("__contains__", &Vocabulary::contains)
      .def("id", &Vocabulary::id, py::arg("word"))
      .def("word", &Vocabulary::word, py::arg("id"))
      .def("words", &Vocabulary::words)
      .def("encode", &Vocabulary::encode, py::arg("text"), py::arg("add_bos_eos") = false)
      .def("decode", &Vocabulary::decode, py::arg("ids"));

  py::class_<BleuScore>(m, "BleuScore")
      .def_readonly("bleu", &BleuScore::bleu)
      .def_readonly("brevity_penalty", &BleuScore::brevity_penalty)
      .def_property_readonly("precisions", [](const BleuScore& b) {
        return std::vector<double>(b.precisions, b.precisions + 4);
      });
  m.def("corpus_bleu", &corpus_bleu, py::arg("candidates"), py::arg("references"),
        py::arg("max_order") = 4);
}

// Text goes in as a str (encoded as UTF-8) or bytes; ids come out as NumPy int64 arrays, text as
// a str.
void bind_characters(py::module_& m) {
  py::class_<CharVocabulary>(m, "CharVocabulary",
                             "The distinct bytes of a training text, sorted: id = position.")
      .def(py::init<>())
      .def_static("build", &CharVocabulary::build, py::arg("text"))
      .def_static("from_json", &CharVocabulary::from_json, py::arg("json"))
      .def("__len__", &CharVocabulary::size)
      .def("__contains__",
           [](const CharVocabulary& v, const std::string& c) {
             return c.size() == 1 && v.contains(c[0]);
           })
      .def("id",
           [](const CharVocabulary& v, const std::string& c) {
             if (c.size() != 1)
               fail("CharVocabulary.id: expected one character (one byte), got ", c.size(),
                    " bytes");
             return v.id(c[0]);
           },
           py::arg("character"))
      .def(
          "character",
          [](const CharVocabulary& v, std::int64_t id) {
            return text_of(std::string(1, v.character(id)));
          },
          py::arg("id"))
      .def_property_readonly("characters",
                             [](const CharVocabulary& v) { return text_of(v.characters()); })
      .def(
          "encode",
          [](const CharVocabulary& v, const std::string& text) {
            return ids_to_numpy(v.encode(text));
          },
          py::arg("text"), "The ids of every character; fails when one is not in the vocabulary.")
      .def(
          "decode",
          [](const CharVocabulary& v, const py::handle& ids) {
            return text_of(v.decode(ids_from(ids, "CharVocabulary.decode")));
          },
          py::arg("ids"))
      .def(
          "unknown",
          [](const CharVocabulary& v, const std::string& text) { return text_of(v.unknown(text)); },
          py::arg("text"), "The characters of `text` the vocabulary lacks, in order.")
      .def("to_json", &CharVocabulary::to_json)
      .def("__repr__", [](const CharVocabulary& v) {
        return "<uwaga.data.CharVocabulary of " + std::to_string(v.size()) + " characters>";
      });

  py::class_<CharCorpus>(m, "CharCorpus",
                         "A text split 90 / 10 and encoded with its training part's vocabulary.")
      .def_readonly("vocab", &CharCorpus::vocab)
      .def_property_readonly("train", [](const CharCorpus& c) { return ids_to_numpy(c.train); },
                             "The first 90 % as ids (a NumPy copy).")
      .def_property_readonly("valid", [](const CharCorpus& c) { return ids_to_numpy(c.valid); },
                             "The last 10 % as ids (a NumPy copy).")
      .def("__repr__", [](const CharCorpus& c) {
        return "<uwaga.data.CharCorpus: " + std::to_string(c.train.size()) + " training, " +
               std::to_string(c.valid.size()) + " validation characters, " +
               std::to_string(c.vocab.size()) + " distinct>";
      });
  m.def("read_text_file", [](const std::string& path) { return text_of(read_text_file(path)); },
        py::arg("path"));
  m.def("split_char_corpus",
        [](const std::string& text, std::int64_t context, const std::optional<CharVocabulary>& vocab,
           const std::string& name) {
          return vocab ? split_char_corpus(text, name, context, *vocab)
                       : split_char_corpus(text, name, context);
        },
        py::arg("text"), py::arg("context"), py::arg("vocab") = py::none(),
        py::arg("name") = "the text",
        "Splits `text` 90 / 10 and encodes both parts with the vocabulary of the training part "
        "(or `vocab`); each part must hold a window of context + 1 characters.");
  m.def("load_char_corpus",
        [](const std::string& path, std::int64_t context) {
          return split_char_corpus(read_text_file(path), path, context);
        },
        py::arg("path"), py::arg("context"), "split_char_corpus of the file at `path`.");

  py::class_<CharWindows, BatchSource>(m, "CharWindows",
                                       "Batches of random windows of a text: inputs (B, T) and "
                                       "targets (B, T), the characters one further on.")
      .def(py::init([](const py::handle& ids, std::int64_t batch_size, std::int64_t context,
                       std::int64_t batches_per_epoch, std::uint64_t seed) {
             return CharWindows(ids_from(ids, "CharWindows(ids)"), batch_size, context,
                                batches_per_epoch, seed);
           }),
           py::arg("ids"), py::arg("batch_size"), py::arg("context"),
           py::arg("batches_per_epoch"), py::arg("seed") = 0)
      .def("batches_per_epoch", &CharWindows::batches_per_epoch)
      .def("begin_epoch", &CharWindows::begin_epoch, py::arg("epoch"))
      .def("batch", &CharWindows::batch, py::arg("index"));
  m.def("consecutive_windows",
        [](const py::handle& ids, std::int64_t context, std::int64_t first, std::int64_t count) {
          return consecutive_windows(ids_from(ids, "consecutive_windows(ids)"), context, first,
                                     count);
        },
        py::arg("ids"), py::arg("context"), py::arg("first"), py::arg("count"),
        "Windows first ... first + count - 1 at offsets 0, T, 2T, ... as one Batch.");
  m.def("consecutive_window_count",
        [](const py::handle& ids, std::int64_t context) {
          return consecutive_window_count(ids_from(ids, "consecutive_window_count(ids)"), context);
        },
        py::arg("ids"), py::arg("context"));
}

void bind_keypoints(py::module_& m) {
  py::class_<SkeletonSpec>(m, "SkeletonSpec", "Which joints a skeleton has and how they connect.")
      .def_readonly("joint_names", &SkeletonSpec::joint_names)
      .def_readonly("bones", &SkeletonSpec::bones, "joint index pairs, drawn as limbs")
      .def_readonly("flip_pairs", &SkeletonSpec::flip_pairs, "(left, right) joint index pairs")
      .def_readonly("oks_sigmas", &SkeletonSpec::oks_sigmas, "OKS's per-joint constants")
      .def("num_joints", &SkeletonSpec::num_joints)
      .def("joint", &SkeletonSpec::joint, py::arg("name"), "The index of the joint called `name`.");
  m.def("stick_figure_skeleton", &stick_figure_skeleton, py::return_value_policy::reference,
        "The stick figures' 15 joints.");
  m.def("coco_skeleton", &coco_skeleton, py::return_value_policy::reference,
        "COCO's 17 keypoints.");

  py::class_<PoseSample>(m, "PoseSample",
                         "One person's crop: image (C, H, W) in [0, 1] and its joints, in input "
                         "pixels (the top-left pixel's centre is (0.5, 0.5)).")
      .def_readonly("image", &PoseSample::image)
      .def_readonly("x", &PoseSample::x)
      .def_readonly("y", &PoseSample::y)
      .def_readonly("visible", &PoseSample::visible, "1: labelled and visible, 0: hidden")
      .def_readonly("area", &PoseSample::area, "OKS's s^2, input pixels^2")
      .def_readonly("torso", &PoseSample::torso, "PCK's reference length, input pixels")
      .def("num_joints", &PoseSample::num_joints);

  py::class_<StickFigureConfig>(m, "StickFigureConfig",
                                "How the stick figures are drawn (data/pose/stick_figures.h).")
      .def(py::init([](const py::kwargs& kw) {
        py::object self = py::cast(StickFigureConfig{});
        for (auto item : kw) py::setattr(self, item.first, item.second);
        return self.cast<StickFigureConfig>();
      }))
      .def_readwrite("height", &StickFigureConfig::height)
      .def_readwrite("width", &StickFigureConfig::width)
      .def_readwrite("max_rotation_deg", &StickFigureConfig::max_rotation_deg)
      .def_readwrite("left_grey", &StickFigureConfig::left_grey)
      .def_readwrite("right_grey", &StickFigureConfig::right_grey)
      .def_readwrite("noise_std", &StickFigureConfig::noise_std)
      .def_readwrite("max_distractors", &StickFigureConfig::max_distractors)
      .def_readwrite("occlusion_probability", &StickFigureConfig::occlusion_probability)
      .def_readwrite("max_occluded_joints", &StickFigureConfig::max_occluded_joints);
  py::class_<StickFigures>(m, "StickFigures",
                           "`count` seeded stick figures: the same seed draws the same figures.")
      .def(py::init([](std::int64_t count, std::uint64_t seed, const StickFigureConfig& config) {
             return StickFigures(config, count, seed);
           }),
           py::arg("count"), py::arg("seed"), py::arg("config") = StickFigureConfig{})
      .def("__len__", &StickFigures::size)
      .def("sample", [](const StickFigures& f, std::int64_t i) {
             if (i < 0 || i >= f.size())
               throw py::index_error("StickFigures.sample: index " + std::to_string(i) +
                                     " is out of range for " + std::to_string(f.size()) +
                                     " figures");
             return f.sample(i);
           },
           py::arg("i"))
      .def_property_readonly("skeleton", &StickFigures::skeleton,
                             py::return_value_policy::reference)
      .def_property_readonly("config", &StickFigures::config);
}

// The byte-level BPE tokenizer (data/text/bpe_tokenizer.h) and GPT-2's pre-tokenizer. Text goes in as
// a str or bytes; a token's own bytes come out as bytes (a token may be part of a character).
void bind_bpe(py::module_& m) {
  py::class_<BpeTokenizer>(m, "BpeTokenizer",
                           "Byte-level BPE: the 256 bytes, then merges of pairs by rank.")
      .def(py::init<>())
      .def_static(
          "train",
          [](const std::string& text, std::int64_t merges) {
            py::gil_scoped_release release;
            return BpeTokenizer::train(text, merges);
          },
          py::arg("text"), py::arg("merges"),
          "Learns `merges` merges from `text` (minbpe's algorithm on GPT-2's pieces).")
      .def_static("load", &BpeTokenizer::load, py::arg("dir"),
                  "From encoder.json + vocab.bpe (OpenAI, npm) or vocab.json + merges.txt "
                  "(Hugging Face) in `dir`.")
      .def("save", &BpeTokenizer::save, py::arg("dir"))
      .def("__len__", &BpeTokenizer::size)
      .def_property_readonly("merge_count", &BpeTokenizer::merge_count)
      .def(
          "encode",
          [](const BpeTokenizer& t, const std::string& text) { return ids_to_numpy(t.encode(text)); },
          py::arg("text"))
      .def(
          "decode",
          [](const BpeTokenizer& t, const py::handle& ids) {
            return text_of(t.decode(ids_from(ids, "BpeTokenizer.decode")));
          },
          py::arg("ids"), "The text of `ids` (a str; bytes that are not UTF-8 become U+FFFD).")
      .def(
          "token",
          [](const BpeTokenizer& t, std::int64_t id) { return py::bytes(t.token(id)); },
          py::arg("id"), "The bytes of token `id`.")
      .def(
          "merge",
          [](const BpeTokenizer& t, std::int64_t rank) {
            if (rank < 0 || rank >= t.merge_count())
              fail("BpeTokenizer.merge: rank ", rank, " is outside 0 … ", t.merge_count() - 1);
            const auto& mg = t.merge(rank);
            return py::make_tuple(mg.a, mg.b, mg.merged);
          },
          py::arg("rank"), "(a, b, merged): the two token ids merge `rank` glues, and the new one.")
      .def("to_json", &BpeTokenizer::to_json)
      .def_static("from_json", &BpeTokenizer::from_json, py::arg("json"))
      .def("__repr__", [](const BpeTokenizer& t) {
        return "<uwaga.data.BpeTokenizer of " + std::to_string(t.size()) + " tokens, " +
               std::to_string(t.merge_count()) + " merges>";
      });
  m.def(
      "pretokenize",
      [](const std::string& text) {
        py::list out;
        for (std::string_view piece : pretokenize(text)) out.append(py::bytes(std::string(piece)));
        return out;
      },
      py::arg("text"), "GPT-2's pre-tokenizer: the pieces (bytes) no merge crosses.");
}

}  // namespace

void bind_data(py::module_& m) {
  bind_batches(m);
  bind_images(m);
  bind_translation(m);
  bind_characters(m);
  bind_bpe(m);
  bind_keypoints(m);
}

}  // namespace uwaga::python
