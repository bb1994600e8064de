// Rebuilding a model from a checkpoint (apps/common/loaded_model.h): the checkpoint's config is
// checked against its tensors before anything is built, and a checkpoint of the other program is
// named as such.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <new>
#include <string>

#include "apps/gpt/gpt_checkpoint.h"
#include "apps/pose/pose_checkpoint.h"
#include "apps/translate/translate_checkpoint.h"
#include "apps/vit/vit_checkpoint.h"
#include "core/error.h"
#include "nn/gpt.h"
#include "nn/gpt2_checkpoint.h"
#include "optim/ema.h"
#include "optim/sgd.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using namespace uwaga::apps;
using Catch::Contains;
using uwaga::testing::TempDir;

namespace {

VitRunConfig small_vit_run() {
  VitRunConfig run = vit_preset("mnist-tiny");
  run.model.depth = 2;
  run.mean = {0.1307f};
  run.std = {0.3081f};
  run.class_names = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  return run;
}

TranslateRunConfig small_translate_run(const std::string& positions = "sinusoidal") {
  TranslateRunConfig run = translate_preset("tiny");
  run.model.positions = positions;
  TranslationCorpus corpus;
  corpus.train = {{"we are eating bread", "estamos comiendo pan"}, {"i eat", "como"}};
  build_vocabularies(run, corpus);
  return run;
}

// The shapes of a model built for real (allocated and initialised), parameters and buffers.
template <class Model, class Config>
optim::ParameterShapes built_shapes(const Config& config) {
  Generator gen(1);
  const Model model(config, gen);
  optim::ParameterShapes shapes;
  for (const auto& [name, t] : model.state_dict()) shapes[name] = t.shape();
  return shapes;
}

// declared_model_shapes (what a checkpoint is checked against) equals the built model's shapes,
// and declared_parameter_count (what a training run's memory estimate counts) its parameters.
template <class Model, class Config>
void check_declared_shapes(const Config& config) {
  const optim::ParameterShapes declared = declared_model_shapes<Model>(config);
  CHECK(!declared.empty());
  CHECK(declared == built_shapes<Model>(config));
  Generator gen(0);
  CHECK(declared_parameter_count<Model>(config) ==
        static_cast<double>(Model(config, gen).num_parameters()));
}

// A checkpoint of `model` whose metadata holds `config` (any text).
template <class Model>
void save_with_config(const std::string& path, const Model& model, const std::string& config) {
  optim::CheckpointInfo info;
  info.config = config;
  optim::save_checkpoint(path, model, nullptr, info);
}

std::string with_model_fields(const std::string& config, const nlohmann::json& fields) {
  nlohmann::json j = nlohmann::json::parse(config);
  for (const auto& [key, value] : fields.items()) j["model"][key] = value;
  return j.dump();
}

}  // namespace

TEST_CASE("loaded model: the declared shapes and parameter count are the built model's, for every preset",
          "[apps][checkpoint]") {
  for (const std::string& name : vit_preset_names()) {
    INFO("uwaga-vit " << name);
    check_declared_shapes<nn::VisionTransformer>(vit_preset(name).model);
  }
  for (const std::string& name : translate_preset_names()) {
    for (const char* positions : {"sinusoidal", "learned"}) {
      INFO("uwaga-translate " << name << ", " << positions << " positions");
      TranslateRunConfig t = translate_preset(name);
      t.model.positions = positions;
      t.model.src_vocab = 40;  // the vocabularies come from the data
      t.model.tgt_vocab = 50;
      check_declared_shapes<nn::Seq2SeqTransformer>(t.model);
    }
  }
  for (const std::string& name : gpt_preset_names()) {
    for (const bool tied : {false, true}) {
      INFO("uwaga-gpt " << name << (tied ? ", tied head" : ""));
      nn::GptConfig c = gpt_preset(name).model;
      c.vocab = 65;  // the vocabulary comes from the text
      c.tie_weights = tied;
      check_declared_shapes<nn::Gpt>(c);
    }
  }
  for (const std::string& name : pose_preset_names()) {
    for (const char* decoder : {"classic", "simple"}) {  // the classic one has buffers
      INFO("uwaga-pose " << name << ", " << decoder << " decoder");
      nn::PoseConfig c = pose_preset(name).model;
      c.decoder = decoder;
      check_declared_shapes<nn::VitPose>(c);
    }
  }
  // A ViT variant no preset has: colour, another patch size, class count and depth.
  VitRunConfig vit = small_vit_run();
  vit.model.channels = 3;
  vit.model.image_size = 32;
  vit.model.patch = 4;
  vit.model.num_classes = 100;
  check_declared_shapes<nn::VisionTransformer>(vit.model);
}

TEST_CASE("loaded model: declaring a model's shapes allocates nothing, whatever it claims",
          "[apps][checkpoint]") {
  // The largest ViT a config may describe: 1000 blocks of dim and MLP width 65536, about 100 TB of
  // float32 parameters if they were allocated.
  VitRunConfig vit = small_vit_run();
  vit.model.dim = 65536;
  vit.model.mlp_dim = 65536;
  vit.model.depth = 1000;
  const auto start = std::chrono::steady_clock::now();
  const optim::ParameterShapes shapes = declared_model_shapes<nn::VisionTransformer>(vit.model);
  CHECK(shapes.at("blocks.999.mlp.fc1.weight") == Shape{65536, 65536});
  // Its parameters, counted the same way: each block's attention (4 D²) and MLP (2 D², the MLP
  // as wide as D), with biases and norms on top.
  CHECK(declared_parameter_count<nn::VisionTransformer>(vit.model) > 1000 * 6.0 * 65536 * 65536);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  // The translator's sinusoid table is computed, not declared: also skipped.
  TranslateRunConfig t = small_translate_run("sinusoidal");
  t.model.dim = 65536;
  t.model.heads = 1;
  t.model.max_length = 100000;  // a 26 GB table
  CHECK(declared_model_shapes<nn::Seq2SeqTransformer>(t.model).at("head.weight") ==
        Shape{t.model.tgt_vocab, 65536});
}

TEST_CASE("loaded model: a config that does not describe the tensors is refused before building",
          "[apps][checkpoint]") {
  TempDir dir("loaded-model");
  const std::string path = dir.file("crafted.safetensors");

  // A small ViT's tensors under a config claiming dim 65536 and depth 1000: building that model
  // first would ask for terabytes.
  VitRunConfig vit = small_vit_run();
  Generator gen(1);
  nn::VisionTransformer model(vit.model, gen);
  save_with_config(path, model, with_model_fields(vit.to_json(), {{"dim", 65536}, {"depth", 1000}}));
  const auto start = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(load_vit(path),
                      Contains(path) && Contains("do not match the model its own configuration") &&
                          Contains("blocks.0.attn.qkv.weight: file (192, 64), config (196608, 65536)"));
  CHECK_THROWS_WITH(read_vit_run_config(path), Contains("nothing was built from it"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));

  // One block fewer in the config than in the file: the extra block is named.
  vit.model.depth = 1;
  save_with_config(path, model, vit.to_json());
  CHECK_THROWS_WITH(load_vit(path), Contains("blocks.1.attn.proj.bias: not in the model"));

  // The translator likewise.
  TranslateRunConfig t = small_translate_run();
  nn::Seq2SeqTransformer translator(t.model, gen);
  save_with_config(path, translator,
                   with_model_fields(t.to_json(), {{"dim", 65536}, {"heads", 1},
                                                   {"encoder_layers", 1000}}));
  CHECK_THROWS_WITH(load_translator(path),
                    Contains("do not match the model its own configuration") &&
                        Contains("config (65536"));

  // And the consistent checkpoints still load.
  save_with_config(path, translator, t.to_json());
  CHECK(load_translator(path).model->config.dim == t.model.dim);
  vit.model.depth = 2;
  save_with_config(path, model, vit.to_json());
  CHECK(load_vit(path).model->config.depth == 2);
}

TEST_CASE("loaded model: a checkpoint of the other program says whose it is", "[apps][checkpoint]") {
  TempDir dir("loaded-model");
  Generator gen(1);
  const std::string vit_path = dir.file("vit.safetensors");
  const std::string translate_path = dir.file("translate.safetensors");
  VitRunConfig vit = small_vit_run();
  save_with_config(vit_path, nn::VisionTransformer(vit.model, gen), vit.to_json());
  TranslateRunConfig t = small_translate_run();
  save_with_config(translate_path, nn::Seq2SeqTransformer(t.model, gen), t.to_json());

  CHECK_THROWS_WITH(load_vit(translate_path),
                    Contains("is a uwaga-translate checkpoint, not a uwaga-vit one") &&
                        !Contains("json.exception"));
  CHECK_THROWS_WITH(read_vit_run_config(translate_path), Contains("give it to uwaga-translate"));
  CHECK_THROWS_WITH(load_translator(vit_path),
                    Contains("is a uwaga-vit checkpoint, not a uwaga-translate one") &&
                        !Contains("json.exception"));
  // Before: a uwaga-gpt checkpoint was only "not written by uwaga-vit (...)".
  const std::string gpt_path = dir.file("gpt.safetensors");
  const nn::GptConfig gpt{
      .vocab = 5, .context = 4, .dim = 8, .layers = 1, .heads = 2, .mlp_dim = 8};
  save_with_config(gpt_path, nn::Gpt(gpt, gen), R"({"format": "uwaga-gpt-1", "model": {}})");
  CHECK_THROWS_WITH(load_vit(gpt_path), Contains("is a uwaga-gpt checkpoint, not a uwaga-vit one; "
                                                 "give it to uwaga-gpt"));
  CHECK_THROWS_WITH(load_translator(gpt_path),
                    Contains("is a uwaga-gpt checkpoint, not a uwaga-translate one"));
  CHECK(run_config_program(R"({"format": "uwaga-translate-1"})") == "uwaga-translate");
  CHECK(run_config_program(R"({"format": "uwaga-gpt-12"})") == "uwaga-gpt");
  CHECK(run_config_program(R"({"format": "uwaga-gpt"})").empty());
  CHECK(run_config_program(R"({"format": "uwaga--1"})").empty());
  CHECK(run_config_program(R"({"format": "uwaga-gpt-"})").empty());
  CHECK(run_config_program(R"({"dataset": "mnist", "model": {}})") == "uwaga-vit");
  CHECK(run_config_program("not json").empty());
}

TEST_CASE("loaded model: a model larger than the memory left is refused before it is built",
          "[apps][checkpoint]") {
#if defined(__SANITIZE_ADDRESS__)
  WARN("skipped: an address-space limit and the sanitizer's shadow memory do not mix");
  return;  // Catch2 v2 has no SKIP
#endif
  TempDir dir("loaded-model");
  const std::string path = dir.file("big.safetensors");
  VitRunConfig vit = small_vit_run();  // about 3.2 million parameters: 13 MB built and saved
  vit.model.dim = 256;
  vit.model.mlp_dim = 1024;
  vit.model.depth = 4;
  Generator gen(1);
  save_with_config(path, nn::VisionTransformer(vit.model, gen), vit.to_json());
  // In a child whose address space has 8 MB left: refused with the estimate (exit 3), where
  // building the model would end in std::bad_alloc (exit 5).
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    struct rlimit limit {};
    ::getrlimit(RLIMIT_AS, &limit);
    limit.rlim_cur = mapped_now() + (8 << 20);
    int code = 1;
    if (::setrlimit(RLIMIT_AS, &limit) == 0) {
      try {
        load_vit(path);
        code = 0;
      } catch (const Error& e) {
        const std::string what = e.what();
        code = what.find("loading '" + path + "' needs about") != std::string::npos &&
                       what.find("of the address-space limit (ulimit -v)") != std::string::npos
                   ? 3
                   : 4;
      } catch (const std::bad_alloc&) {
        code = 5;
      } catch (...) {
        code = 6;
      }
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  // Without the limit it loads.
  CHECK(load_vit(path).model->config.dim == 256);
}

TEST_CASE("loaded model: a ViT's moving average holding NaN is refused, as --resume refuses it",
          "[apps][checkpoint]") {
  TempDir dir("loaded-ema");
  const std::string path = dir.file("ema.safetensors");
  VitRunConfig run = small_vit_run();
  run.ema = 0.999;
  Generator gen(1);
  nn::VisionTransformer model(run.model, gen);
  // The average starts as the weights: one NaN in them while it is made, then put back.
  auto params = model.named_parameters();
  const std::string name = params.front().first;
  Tensor p = params.front().second;
  const float kept = p.data<float>()[3];
  p.data<float>()[3] = std::nanf("");
  optim::Sgd sgd(optim::make_param_groups(model, 0.0), {0.1});
  optim::WithEma ema(sgd, run.ema);
  p.data<float>()[3] = kept;
  optim::CheckpointInfo info;
  info.config = run.to_json();
  optim::save_checkpoint(path, model, &ema, info);
  CHECK_THROWS_WITH(load_vit(path), Contains("the moving average of '" + name +
                                             "' (optimizer state 'optim." + name +
                                             ".ema') holds NaN or inf"));
}

namespace {

// A GPT-2 in Hugging Face's layout (no config.json: sizes from the shapes) of `config`'s shape,
// and a tokenizer of its 256 bytes beside it, in `dir`.
void save_small_gpt2(const std::string& dir, const nn::GptConfig& config) {
  Generator gen(2);
  const nn::Gpt model(config, gen);
  nn::save_gpt2(model, dir);
  std::filesystem::remove(dir + "/config.json");
  BpeTokenizer().save(dir + "/tokenizer");
}

nn::GptConfig byte_gpt2(std::int64_t dim, std::int64_t layers) {
  nn::GptConfig c;
  c.vocab = 256, c.context = 16, c.dim = dim, c.layers = layers, c.heads = dim / 64;
  c.mlp_dim = 4 * dim, c.tie_weights = true, c.gelu = "tanh";
  return c;
}

}  // namespace

TEST_CASE("loaded model: a GPT-2 larger than the memory left is refused before it is read",
          "[apps][checkpoint]") {
#if defined(__SANITIZE_ADDRESS__)
  WARN("skipped: an address-space limit and the sanitizer's shadow memory do not mix");
  return;
#endif
  TempDir dir("loaded-gpt2");
  save_small_gpt2(dir.str(), byte_gpt2(256, 4));  // about 3.2 million parameters
  const std::string path = dir.file("model.safetensors");
  // In a child whose address space has 8 MB left: load_any_gpt (the programs) and
  // load_gpt2_within_memory (Python's load_gpt2, which read the file unguarded) refuse with the
  // estimate (exit 3), where reading it would end in std::bad_alloc (exit 5).
  for (int which = 0; which < 2; ++which) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      struct rlimit limit {};
      ::getrlimit(RLIMIT_AS, &limit);
      limit.rlim_cur = mapped_now() + (8 << 20);
      int code = 1;
      if (::setrlimit(RLIMIT_AS, &limit) == 0) {
        try {
          if (which == 0) load_any_gpt(path, dir.file("tokenizer"));
          else load_gpt2_within_memory(path);
          code = 0;
        } catch (const Error& e) {
          const std::string what = e.what();
          code = what.find("loading '" + path + "' needs about") != std::string::npos &&
                         what.find("of the address-space limit (ulimit -v)") != std::string::npos
                     ? 3
                     : 4;
        } catch (const std::bad_alloc&) {
          code = 5;
        } catch (...) {
          code = 6;
        }
      }
      ::_exit(code);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 3);
  }
  // Without the limit both load.
  CHECK(load_any_gpt(path, dir.file("tokenizer")).model->config.dim == 256);
  CHECK(load_gpt2_within_memory(path)->config.layers == 4);
}

TEST_CASE("loaded model: --tokenizer with a file that is no checkpoint names what it is",
          "[apps][checkpoint]") {
  TempDir dir("loaded-special");
  save_small_gpt2(dir.str(), byte_gpt2(64, 1));
  const std::string tokenizer = dir.file("tokenizer");
  // It said "is a uwaga-gpt checkpoint, which carries its own" of each of these.
  const std::string fifo = dir.file("fifo"), zero = dir.file("zero"), sub = dir.file("sub");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::filesystem::create_symlink("/dev/zero", zero);
  std::filesystem::create_directory(sub);
  CHECK_THROWS_WITH(load_any_gpt(fifo, tokenizer), Contains("is a FIFO (named pipe), not a regular file"));
  CHECK_THROWS_WITH(load_any_gpt(zero, tokenizer), Contains("is a character device, not a regular file"));
  CHECK_THROWS_WITH(load_any_gpt(sub, tokenizer), Contains("is a directory, not a regular file"));
  CHECK_THROWS_WITH(load_tokenizer_files(fifo), Contains("--tokenizer '" + fifo + "' is a FIFO (named pipe), not a directory"));
  // A uwaga-gpt checkpoint is still named as one.
  GptRunConfig run = gpt_preset("smoke");
  run.vocab = CharVocabulary::build("abc");
  run.model.vocab = run.vocab.size();
  Generator gen(1);
  save_with_config(dir.file("gpt.safetensors"), nn::Gpt(run.model, gen), run.to_json());
  CHECK_THROWS_WITH(load_any_gpt(dir.file("gpt.safetensors"), tokenizer),
                    Contains("is a uwaga-gpt checkpoint, which carries its own"));
  // And the GPT-2 loads with its tokenizer.
  CHECK(load_any_gpt(dir.file("model.safetensors"), tokenizer).run.bpe.size() == 256);
}
