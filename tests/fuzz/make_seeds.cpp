// Writes the seed corpus of the fuzz targets, tests/fuzz/corpus/<target>/, with uwaga's own
// writers: small valid inputs the fuzzer mutates. Run once by hand when a format changes:
//   build-fuzz/make_seeds tests/fuzz/corpus
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apps/gpt/gpt_checkpoint.h"
#include "apps/translate/translate_checkpoint.h"
#include "apps/vit/vit_checkpoint.h"
#include "core/safetensors.h"
#include "data/text/char_corpus.h"
#include "data/images/jpeg.h"
#include "data/images/pnm.h"
#include "data/translation/vocabulary.h"

using namespace uwaga;
namespace fs = std::filesystem;

namespace {

fs::path root;

void put(const std::string& target, const std::string& name, const std::string& bytes) {
  fs::create_directories(root / target);
  std::ofstream(root / target / name, std::ios::binary) << bytes;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string gzip(const std::string& bytes) {
  std::vector<Bytef> out(compressBound(static_cast<uLong>(bytes.size())) + 32);
  z_stream zs{};
  deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  deflateEnd(&zs);
  return std::string(out.begin(), out.begin() + static_cast<long>(zs.total_out));
}

std::string be32(std::uint32_t v) {
  return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  root = argv[1];
  const std::string tmp = (root / "seed.tmp").string();

  // safetensors: every dtype, 0-d and empty tensors, metadata, checksums.
  save_safetensors(tmp,
                   {{"w", Tensor::from_vector({1.5, -2.0, 0.25, 3.0}, {2, 2}, DType::Float32)},
                    {"d", Tensor::from_vector({0.1, 0.2}, {2}, DType::Float64)},
                    {"i", Tensor::from_indices({-1, 7}, {2})},
                    {"s", Tensor::scalar(4.0, DType::Float32)},
                    {"e", Tensor::zeros({0, 2}, DType::Float32)}},
                   {{"step", "3"}, {"note", "seed"}});
  put("safetensors", "small", file_bytes(tmp));

  // A tiny ViT and a tiny translator, as the apps save them.
  apps::VitRunConfig vit = apps::vit_preset("mnist-tiny");
  vit.model = {.image_size = 4, .channels = 1, .patch = 2, .dim = 8, .depth = 1, .heads = 2,
               .mlp_dim = 8, .num_classes = 3};
  vit.mean = {0.5f};
  vit.std = {0.25f};
  vit.class_names = {"a", "b", "c"};
  Generator gen(1);
  optim::CheckpointInfo info;
  info.config = vit.to_json();
  optim::save_checkpoint(tmp, nn::VisionTransformer(vit.model, gen), nullptr, info);
  put("checkpoint_vit", "tiny", file_bytes(tmp));
  put("run_config", "vit", vit.to_json());

  apps::TranslateRunConfig tr = apps::translate_preset("tiny");
  TranslationCorpus corpus;
  corpus.train = {{"we eat bread", "comemos pan"}, {"i eat", "como"}};
  apps::build_vocabularies(tr, corpus);
  tr.model.dim = 8;
  tr.model.heads = 2;
  tr.model.mlp_dim = 8;
  tr.model.max_length = 6;
  info.config = tr.to_json();
  optim::save_checkpoint(tmp, nn::Seq2SeqTransformer(tr.model, gen), nullptr, info);
  put("checkpoint_translate", "tiny", file_bytes(tmp));
  put("run_config", "translate", tr.to_json());
  tr.model.positions = "learned";
  info.config = tr.to_json();
  optim::save_checkpoint(tmp, nn::Seq2SeqTransformer(tr.model, gen), nullptr, info);
  put("checkpoint_translate", "tiny-learned", file_bytes(tmp));
  put("run_config", "translate-learned", tr.to_json());

  // A tiny GPT on the characters of a short text, its head apart and tied to the token table.
  const std::string text = "to be, or not to be: that is the question.\n";
  apps::GptRunConfig gpt = apps::gpt_preset("smoke");
  gpt.vocab = CharVocabulary::build(text);
  gpt.model = {.vocab = gpt.vocab.size(), .context = 4, .dim = 8, .layers = 1, .heads = 2,
               .mlp_dim = 8};
  info.config = gpt.to_json();
  optim::save_checkpoint(tmp, nn::Gpt(gpt.model, gen), nullptr, info);
  put("checkpoint_gpt", "tiny", file_bytes(tmp));
  put("run_config", "gpt", gpt.to_json());
  gpt.model.tie_weights = true;
  info.config = gpt.to_json();
  optim::save_checkpoint(tmp, nn::Gpt(gpt.model, gen), nullptr, info);
  put("checkpoint_gpt", "tiny-tied", file_bytes(tmp));

  // The character corpus: a vocabulary as JSON, a newline, a text (its first byte sets the
  // window length).
  put("char_corpus", "own-vocabulary", gpt.vocab.to_json() + "\n" + text + text + text);
  put("char_corpus", "other-vocabulary",
      CharVocabulary::build("abc \n").to_json() + "\n" + std::string(40, 'a') + "b c\ncab\n");

  // IDX: 'z' + a file the target gzips; 'r' + a file as it is (raw, or a gzip stream).
  const std::string images = be32(2051) + be32(2) + be32(3) + be32(3) + std::string(18, '\x40');
  const std::string labels = be32(2049) + be32(2) + std::string("\x01\x09", 2);
  put("idx", "images-raw", "r" + images);
  put("idx", "labels-raw", "r" + labels);
  put("idx", "images-z", "z" + images);
  put("idx", "labels-z", "z" + labels);
  put("idx", "images-gzip", "r" + gzip(images));

  // CIFAR-10: two records, raw and gzip.
  std::string records(2 * 3073, '\x80');
  records[0] = 3;
  records[3073] = 9;
  put("cifar10", "two-records", records);
  put("cifar10", "two-records-gz", gzip(records));

  // PGM and PPM, binary and text, with a comment.
  put("pnm", "p5", std::string("P5\n# seed\n3 2\n255\n", 18) + std::string(6, '\x7f'));
  put("pnm", "p6", std::string("P6 2 1 255\n") + std::string(6, '\x10'));
  put("pnm", "p2", "P2\n2 2\n15\n0 5 10 15\n");
  put("pnm", "p3", "P3\n1 1\n255\n255 0 128\n");

  // Vocabulary JSON, a newline, a sentence.
  const Vocabulary vocab = Vocabulary::build({"we eat bread", "i eat"});
  put("vocabulary", "small", vocab.to_json() + "\nwe eat the bread ."); 
  // JPEG: colour and grey, from uwaga's encoder.
  std::vector<std::uint8_t> pixels(3 * 8 * 16);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 5);
  const auto rgb = encode_jpeg(pixels.data(), 3, 8, 16, 75);
  const auto grey = encode_jpeg(pixels.data(), 1, 8, 8, 50);
  put("jpeg", "rgb", std::string(rgb.begin(), rgb.end()));
  put("jpeg", "grey", std::string(grey.begin(), grey.end()));

  // A COCO keypoints file: two persons on the target's photo.jpg, a crowd, categories.
  put("coco_keypoints", "small", R"({"images": [{"id": 1, "file_name": "photo.jpg", "height": 30,
  "width": 40}], "annotations": [{"id": 7, "image_id": 1, "category_id": 1, "iscrowd": 0,
  "bbox": [5, 4, 20, 22], "area": 300.5, "num_keypoints": 2, "segmentation": [[5, 4, 25, 4, 25, 26]],
  "keypoints": [10, 6, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]},
  {"id": 8, "image_id": 1, "category_id": 1, "iscrowd": 1, "bbox": [0, 0, 40, 30], "area": 1200,
  "segmentation": {"counts": [0, 1200], "size": [30, 40]}, "keypoints": [0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0]},
  {"id": 9, "image_id": 1, "category_id": 1, "iscrowd": 0, "bbox": [30, 20, 8, 9.5], "area": 50,
  "keypoints": [35, 25, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 80, 60, 2]}],
  "categories": [{"id": 1, "name": "person", "keypoints": ["nose", "left_eye", "right_eye",
  "left_ear", "right_ear", "left_shoulder", "right_shoulder", "left_elbow", "right_elbow",
  "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle",
  "right_ankle"]}]})");
  fs::remove(tmp);
  return 0;
}
