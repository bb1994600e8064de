// GPT-2 checkpoints in Hugging Face's layout: a model uwaga writes in that layout comes back
// whole; a GPT-2 made by PyTorch (tests/nn/gpt2_torch_reference.py: 2 layers, width 64, 4 heads,
// the real 50,257-token vocabulary, random weights) gives the logits of a forward pass written
// from the paper, in float32 to 1e-4 relative, and the same greedy tokens; F16 and BF16 files;
// every way a file can disagree with its configuration is named; save_gpt2 writes the layout back;
// fine-tuning from such a file (loss, gradients, AdamW steps) equals an independent reference
// (tests/nn/gpt2_finetune_reference.py).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/uwaga.h"
#include "core/safetensors.h"
#include "nn/gpt2_checkpoint.h"
#include "nn/loss.h"
#include "nn/sampling.h"
#include "optim/adam.h"
#include "tests/support/gradcheck.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using namespace uwaga::nn;
using uwaga::testing::max_abs_diff;
using Catch::Contains;

namespace {

// `model`'s weights under Hugging Face's names, Conv1D weights (in, out).
std::map<std::string, Tensor> hf_tensors(const Gpt& model, const std::string& prefix) {
  std::map<std::string, Tensor> out;
  const StateDict state = model.state_dict();
  auto put = [&](const std::string& hf, const std::string& ours, bool conv1d = false) {
    const Tensor& t = state.at(ours);
    out[prefix + hf] = conv1d ? transpose(t, 0, 1) : t.clone();
  };
  put("wte.weight", "token_embed.weight");
  put("wpe.weight", "pos_embed.weight");
  for (std::int64_t i = 0; i < model.config.layers; ++i) {
    const std::string h = "h." + std::to_string(i) + ".", b = "blocks." + std::to_string(i) + ".";
    for (auto [hf, ours] : {std::pair{"ln_1", "norm1"}, {"ln_2", "norm2"}}) {
      put(h + hf + ".weight", b + ours + ".weight");
      put(h + hf + ".bias", b + ours + ".bias");
    }
    for (auto [hf, ours] : {std::pair{"attn.c_attn", "attn.qkv"}, {"attn.c_proj", "attn.proj"},
                            {"mlp.c_fc", "mlp.fc1"}, {"mlp.c_proj", "mlp.fc2"}}) {
      put(h + hf + ".weight", b + ours + ".weight", true);
      put(h + hf + ".bias", b + ours + ".bias");
    }
  }
  put("ln_f.weight", "norm.weight");
  put("ln_f.bias", "norm.bias");
  return out;
}

void write_config(const std::string& dir, const GptConfig& c, const std::string& extra = "") {
  std::ofstream(dir + "/config.json")
      << "{\"n_embd\": " << c.dim << ", \"n_layer\": " << c.layers << ", \"n_head\": " << c.heads
      << ", \"n_positions\": " << c.context << ", \"vocab_size\": " << c.vocab
      << ", \"n_inner\": " << c.mlp_dim << ", \"activation_function\": \"gelu_new\"" << extra
      << "}";
}

GptConfig small() {
  GptConfig c;
  c.vocab = 300, c.context = 16, c.dim = 64, c.layers = 2, c.heads = 4, c.mlp_dim = 256;
  c.tie_weights = true, c.gelu = "tanh";
  return c;
}

double max_relative_error(const Tensor& got, const Tensor& want) {
  double diff = 0, scale = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    diff = std::max(diff, std::fabs(got.flat(i) - want.flat(i)));
    scale = std::max(scale, std::fabs(want.flat(i)));
  }
  return diff / scale;
}

}  // namespace

TEST_CASE("gpt2 checkpoint: uwaga's model in Hugging Face's layout comes back whole",
          "[nn][gpt][gpt2]") {
  Generator gen(4);
  Gpt model(small(), gen);
  uwaga::testing::TempDir dir("gpt2-layout");
  save_safetensors(dir.file("model.safetensors"), hf_tensors(model, "transformer."));
  write_config(dir.str(), small());
  const auto loaded = load_gpt2(dir.file("model.safetensors"));
  CHECK(loaded->config.to_json() == small().to_json());
  const Tensor ids = Tensor::from_indices({1, 5, 299, 7, 0, 42}, {1, 6});
  CHECK(max_abs_diff(loaded->forward(ids), model.forward(ids)) == 0);

  // Without config.json the sizes come from the shapes, the heads from GPT-2's width 64.
  std::filesystem::remove(dir.file("config.json"));
  const GptConfig inferred = gpt2_config(dir.file("model.safetensors"));
  CHECK(inferred.heads == 1);
  CHECK(inferred.dim == 64);
  CHECK(inferred.layers == 2);
  CHECK(inferred.mlp_dim == 256);
  CHECK(inferred.context == 16);
  CHECK(inferred.vocab == 300);

  // A lm_head.weight of its own (not equal to wte) is an untied head.
  auto tensors = hf_tensors(model, "");
  Tensor head = tensors.at("wte.weight") * 2.0;
  tensors["lm_head.weight"] = head;
  save_safetensors(dir.file("model.safetensors"), tensors);
  write_config(dir.str(), small());
  const auto untied = load_gpt2(dir.file("model.safetensors"));
  CHECK_FALSE(untied->config.tie_weights);
  REQUIRE(untied->head);
  CHECK(max_abs_diff(untied->head->weight, head) == 0);
}

TEST_CASE("gpt2 checkpoint: a file that disagrees with its configuration is named",
          "[nn][gpt][gpt2]") {
  Generator gen(4);
  Gpt model(small(), gen);
  uwaga::testing::TempDir dir("gpt2-bad");
  const std::string path = dir.file("model.safetensors");
  write_config(dir.str(), small());
  auto with = [&](auto edit) {
    auto tensors = hf_tensors(model, "transformer.");
    edit(tensors);
    save_safetensors(path, tensors);
  };
  with([](auto& t) { t.erase("transformer.ln_f.bias"); });
  CHECK_THROWS_WITH(load_gpt2(path), Contains("lacks the tensor ln_f.bias (64,)"));
  with([](auto& t) { t["transformer.h.1.mlp.c_fc.weight"] = Tensor::zeros({256, 64}); });
  CHECK_THROWS_WITH(load_gpt2(path),
                    Contains("the tensor h.1.mlp.c_fc.weight is (256, 64), expected (64, 256)"));
  with([](auto& t) { t["transformer.h.2.ln_1.weight"] = Tensor::zeros({64}); });
  CHECK_THROWS_WITH(load_gpt2(path),
                    Contains("holds the unexpected tensor transformer.h.2.ln_1.weight (64,)"));
  with([](auto&) {});
  write_config(dir.str(), [] { GptConfig c = small(); c.vocab = 50257; return c; }());
  CHECK_THROWS_WITH(load_gpt2(path), Contains("the tensor wte.weight is (300, 64), expected (50257, 64)"));
  write_config(dir.str(), small(), ", \"layer_norm_epsilon\": 1e-6");
  CHECK_THROWS_WITH(load_gpt2(path), Contains("layer_norm_epsilon 1e-06 is not GPT-2's 1e-5"));
  std::ofstream(dir.file("config.json")) << "{\"n_embd\": 64}";
  CHECK_THROWS_WITH(load_gpt2(path), Contains("config.json': \"n_layer\" should be a whole number"));
  CHECK_THROWS_WITH(load_gpt2(dir.file("nowhere.safetensors")), Contains("nowhere.safetensors"));
}

TEST_CASE("gpt2 checkpoint: config.json that is no regular file, or has a wrong type, is named",
          "[nn][gpt][gpt2]") {
  Generator gen(4);
  Gpt model(small(), gen);
  uwaga::testing::TempDir dir("gpt2-config");
  const std::string path = dir.file("model.safetensors"), config = dir.file("config.json");
  save_safetensors(path, hf_tensors(model, "transformer."));
  // A FIFO blocked the reader, /dev/zero was read for seconds, a directory was "not valid JSON".
  REQUIRE(::mkfifo(config.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(load_gpt2(path), Contains("'" + config + "': is a FIFO (named pipe), not a regular file"));
  std::filesystem::remove(config);
  std::filesystem::create_symlink("/dev/zero", config);
  CHECK_THROWS_WITH(gpt2_config(path), Contains("'" + config + "': is a character device"));
  std::filesystem::remove(config);
  std::filesystem::create_directory(config);
  CHECK_THROWS_WITH(gpt2_config(path), Contains("'" + config + "': is a directory"));
  std::filesystem::remove(config);
  std::filesystem::create_symlink(dir.file("nowhere.json"), config);  // a broken link
  CHECK_THROWS_WITH(gpt2_config(path), Contains("'" + config + "': cannot open"));
  std::filesystem::remove(config);
  // A number where a name belongs was nlohmann's raw type_error.
  write_config(dir.str(), small(), ", \"activation_function\": 5");
  std::string text;
  {
    std::ifstream in(config);
    std::getline(in, text, '\0');
  }
  const std::string gelu = "\"activation_function\": \"gelu_new\", ";
  text.erase(text.find(gelu), gelu.size());  // only the 5 left
  std::ofstream(config) << text;
  CHECK_THROWS_WITH(gpt2_config(path),
                    Contains("config.json': \"activation_function\" should be a string (gelu_new, "
                             "gelu), got 5"));
  write_config(dir.str(), small());
  CHECK(gpt2_config(path).gelu == "tanh");
}

TEST_CASE("gpt2 checkpoint: a tensor holding NaN or inf is refused, named", "[nn][gpt][gpt2]") {
  Generator gen(4);
  Gpt model(small(), gen);
  uwaga::testing::TempDir dir("gpt2-nan");
  const std::string path = dir.file("model.safetensors");
  write_config(dir.str(), small());
  for (const double bad : {std::nan(""), double{INFINITY}, -double{INFINITY}}) {
    auto tensors = hf_tensors(model, "transformer.");
    Tensor& w = tensors.at("transformer.h.1.attn.c_proj.weight");
    w.data<float>()[70] = static_cast<float>(bad);
    save_safetensors(path, tensors);
    CHECK_THROWS_WITH(load_gpt2(path),
                      Contains("the tensor transformer.h.1.attn.c_proj.weight holds " +
                               std::string(std::isnan(bad) ? "NaN" : bad > 0 ? "inf" : "-inf") +
                               " at index 70"));
  }
  // Past the first block of 4,096 values the search goes by, the first of two named: the table's
  // (300 × 64) index 4,101, not its last, 19,199.
  auto tensors = hf_tensors(model, "transformer.");
  float* wte = tensors.at("transformer.wte.weight").data<float>();
  wte[19199] = std::nanf("");
  wte[4101] = INFINITY;
  save_safetensors(path, tensors);
  CHECK_THROWS_WITH(load_gpt2(path),
                    Contains("the tensor transformer.wte.weight holds inf at index 4101"));
  save_safetensors(path, hf_tensors(model, "transformer."));
  CHECK_NOTHROW(load_gpt2(path));
}

TEST_CASE("gpt2 checkpoint: a GPT-2 written by PyTorch gives the paper's logits",
          "[nn][gpt][gpt2][python]") {
  const std::string python = "/usr/bin/python3";
  if (std::system((python + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0) {
    WARN("skipped: " << python << " with torch is not available");
    return;
  }
  uwaga::testing::TempDir dir("gpt2-torch");
  const std::string script = UWAGA_SOURCE_DIR "/tests/nn/gpt2_torch_reference.py";
  REQUIRE(std::system((python + " " + script + " " + dir.str()).c_str()) == 0);
  SafetensorsFile ref = load_safetensors(dir.file("reference.safetensors"));

  const auto model = load_gpt2(dir.file("model.safetensors"));
  CHECK(model->config.vocab == 50257);
  CHECK(model->config.context == 1024);
  CHECK(model->config.heads == 4);
  CHECK(model->config.gelu == "tanh");
  CHECK(model->config.tie_weights);
  const Tensor& tokens = ref.tensors.at("tokens");
  const Tensor logits = model->forward(reshape(tokens, {1, tokens.numel()}));
  const Tensor want = ref.tensors.at("logits");
  const double rel = max_relative_error(reshape(logits, want.shape()), want);
  INFO("largest difference / largest logit: " << rel);
  CHECK(rel <= 1e-4);

  // Temperature 0 with the key/value cache: the tokens the reference's full passes chose.
  const Tensor& prompt = ref.tensors.at("prompt");
  const Tensor& greedy = ref.tensors.at("greedy");
  std::vector<std::int64_t> ids(prompt.data<std::int64_t>(), prompt.data<std::int64_t>() + prompt.numel());
  TokenStream stream(*model, ids, SamplingOptions{.temperature = 0.0}, 1);
  while (static_cast<std::int64_t>(stream.tokens().size()) < greedy.numel()) stream.next();
  const std::vector<std::int64_t> want_tokens(greedy.data<std::int64_t>(),
                                              greedy.data<std::int64_t>() + greedy.numel());
  CHECK(stream.tokens() == want_tokens);

  // Half-precision files (prefix-less names, lm_head and the old mask buffers) read as float32.
  for (auto [sub, key] : {std::pair{"half", "wte_f16"}, {"bhalf", "wte_bf16"}}) {
    const auto half = load_gpt2(dir.file(std::string(sub) + "/model.safetensors"));
    CHECK(half->config.tie_weights);
    CHECK(max_abs_diff(half->token_embed->weight, ref.tensors.at(key)) == 0);
  }
}

TEST_CASE("gpt2 checkpoint: save_gpt2 writes Hugging Face's layout, and reads back whole",
          "[nn][gpt][gpt2]") {
  uwaga::testing::TempDir dir("gpt2-export");
  GptConfig untied = small();
  untied.tie_weights = false, untied.gelu = "erf", untied.mlp_dim = 4 * untied.dim;
  for (const GptConfig& c : {small(), untied}) {
    Generator gen(9);
    Gpt model(c, gen);
    save_gpt2(model, dir.str());
    // The tensors are those of the hand-made layout above (plus lm_head when untied).
    const SafetensorsFile file = load_safetensors(dir.file("model.safetensors"));
    const auto want = hf_tensors(model, "transformer.");
    CHECK(file.tensors.size() == want.size() + (c.tie_weights ? 0 : 1));
    for (const auto& [name, t] : want) {
      INFO(name);
      REQUIRE(file.tensors.count(name));
      CHECK(max_abs_diff(file.tensors.at(name), t) == 0);
    }
    const auto back = load_gpt2(dir.file("model.safetensors"));
    CHECK(back->config.to_json() == c.to_json());
    const StateDict a = model.state_dict(), b = back->state_dict();
    REQUIRE(a.size() == b.size());
    for (const auto& [name, t] : a) CHECK(max_abs_diff(b.at(name), t) == 0);
  }
}

TEST_CASE("gpt2 fine-tuning: loss, gradients and AdamW steps equal an independent reference",
          "[nn][gpt][gpt2][python]") {
  // tests/nn/gpt2_finetune_reference.py: the paper's forward pass in float64, PyTorch's autograd
  // and torch.optim.AdamW, on the parameter groups uwaga-gpt trains with.
  const std::string python = "/usr/bin/python3";
  if (std::system((python + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0) {
    WARN("skipped: " << python << " with torch is not available");
    return;
  }
  uwaga::testing::TempDir dir("gpt2-finetune");
  const std::string script = UWAGA_SOURCE_DIR "/tests/nn/gpt2_finetune_reference.py";
  REQUIRE(std::system((python + " " + script + " " + dir.str()).c_str()) == 0);
  const SafetensorsFile ref = load_safetensors(dir.file("finetune.safetensors"));
  const Tensor& tokens = ref.tensors.at("tokens");  // (B, T + 1)
  const std::int64_t T = tokens.size(1) - 1;
  const Tensor inputs = slice(tokens, 1, 0, T), targets = slice(tokens, 1, 1, T + 1);
  const std::vector<double> losses = ref.tensors.at("losses").to_vector();
  const std::vector<double> hyper = ref.tensors.at("hyper").to_vector();  // lr, β1, β2, decay

  // As uwaga-gpt train --init loads it (apps/gpt/gpt_commands.cpp load_init_weights).
  const auto model = load_gpt2(dir.file("model.safetensors"));
  model->train();
  const CrossEntropyLoss loss_fn;
  optim::AdamW adam(optim::make_param_groups(*model, hyper[3]), {hyper[0], hyper[1], hyper[2]});
  const NamedTensors params = model->named_parameters();
  auto param = [&](const std::string& hf) -> const Tensor& {  // by Hugging Face's name
    const std::map<std::string, std::string> ours = {
        {"wte.weight", "token_embed.weight"}, {"wpe.weight", "pos_embed.weight"},
        {"h.0.attn.c_attn.weight", "blocks.0.attn.qkv.weight"},
        {"h.1.mlp.c_proj.bias", "blocks.1.mlp.fc2.bias"},
        {"h.1.ln_2.weight", "blocks.1.norm2.weight"}, {"ln_f.bias", "norm.bias"}};
    for (const auto& [name, p] : params)
      if (name == ours.at(hf)) return p;
    FAIL("no parameter for " << hf);
    return params.front().second;
  };
  auto as_hf = [](const std::string& hf, const Tensor& t) {  // Conv1D weights are (in, out)
    return hf.find("c_attn.weight") != std::string::npos ? transpose(t, 0, 1) : t;
  };
  const std::vector<std::string> checked = {"wte.weight", "wpe.weight", "h.0.attn.c_attn.weight",
                                            "h.1.mlp.c_proj.bias", "h.1.ln_2.weight", "ln_f.bias"};
  const std::int64_t K = static_cast<std::int64_t>(losses.size()) - 1;
  for (std::int64_t step = 0; step <= K; ++step) {
    model->zero_grad();
    const Tensor loss = loss_fn(model->forward(inputs), targets);
    INFO("step " << step << ": loss " << loss.item() << ", reference " << losses[step]);
    CHECK(std::fabs(loss.item() - losses[step]) <= 1e-5 * std::fabs(losses[step]));
    if (step == K) break;
    loss.backward();
    if (step == 0) {
      for (const std::string& name : checked) {
        const double rel = max_relative_error(as_hf(name, param(name).grad()),
                                              ref.tensors.at("grad." + name));
        INFO("gradient of " << name << ": largest difference / largest entry " << rel);
        CHECK(rel <= 1e-5);
      }
    }
    adam.step();
  }
  // After the steps the weights agree to 1e-5, or, where float32 alone ends further from the
  // float64 run (Adam divides gradients near zero by their own size: a token's embedding row that
  // the batch barely touches moves by up to lr either way), within twice PyTorch's float32 run.
  for (const std::string& name : checked) {
    const Tensor& want = ref.tensors.at("after." + name);
    const double rel = max_relative_error(as_hf(name, param(name)), want);
    const double torch32 = max_relative_error(ref.tensors.at("after32." + name), want);
    INFO(name << " after " << K << " AdamW steps: largest difference / largest entry " << rel
              << " (PyTorch in float32: " << torch32 << ")");
    CHECK(rel <= std::max(1e-5, 2 * torch32));
  }
}
