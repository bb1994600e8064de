// uwaga.data: image datasets (pixels as a NumPy view), the data loader, the toy English -> Spanish
// corpus and its vocabulary.
#include <pybind11/stl.h>

#include "data/batch_source.h"
#include "data/bleu.h"
#include "data/data_loader.h"
#include "data/datasets.h"
#include "data/image_dataset.h"
#include "data/translation_corpus.h"
#include "data/vocabulary.h"
#include "notebooks/bindings/bindings.h"

namespace uwaga::python {
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
      .def(py::init([](std::int64_t shift, bool flip) { return AugmentOptions{shift, flip}; }),
           py::arg("max_shift") = 0, py::arg("horizontal_flip") = false)
      .def_readwrite("max_shift", &AugmentOptions::max_shift)
      .def_readwrite("horizontal_flip", &AugmentOptions::horizontal_flip);
  py::class_<DataLoaderOptions>(m, "DataLoaderOptions")
      .def(py::init([](std::int64_t batch_size, bool shuffle, bool drop_last, std::uint64_t seed,
                       std::vector<float> mean, std::vector<float> std, AugmentOptions augment) {
             return DataLoaderOptions{batch_size, shuffle, drop_last, seed, std::move(mean),
                                      std::move(std), augment};
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

}  // namespace

void bind_data(py::module_& m) {
  bind_batches(m);
  bind_images(m);
  bind_translation(m);
}

}  // namespace uwaga::python
