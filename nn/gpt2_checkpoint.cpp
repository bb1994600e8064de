#include "nn/gpt2_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "core/json_input.h"
#include "core/output_file.h"
#include "core/reduction.h"
#include "core/regular_file.h"
#include "core/safetensors.h"
#include "core/shape_ops.h"

namespace uwaga::nn {
namespace {

constexpr const char* kPrefix = "transformer.";

// Hugging Face's name without the optional prefix.
std::string short_name(const std::string& name) {
  return name.rfind(kPrefix, 0) == 0 ? name.substr(std::string(kPrefix).size()) : name;
}

// The causal-mask buffers of older files: h.<i>.attn.bias and h.<i>.attn.masked_bias.
bool is_mask_buffer(const std::string& name) {
  const auto ends = [&](const std::string& tail) {
    return name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return name.rfind("h.", 0) == 0 && (ends(".attn.bias") || ends(".attn.masked_bias"));
}

// Every weight's Hugging Face name (short), its shape in the file, and its uwaga name; `conv1d`
// when stored (in, out).
struct Gpt2Tensor {
  Shape shape;
  std::string uwaga_name;
  bool conv1d = false;
};

std::map<std::string, Gpt2Tensor> expected_tensors(const GptConfig& c) {
  const std::int64_t D = c.dim, F = c.mlp_dim;
  std::map<std::string, Gpt2Tensor> t;
  t["wte.weight"] = {{c.vocab, D}, "token_embed.weight"};
  t["wpe.weight"] = {{c.context, D}, "pos_embed.weight"};
  for (std::int64_t i = 0; i < c.layers; ++i) {
    const std::string h = "h." + std::to_string(i) + ".", b = "blocks." + std::to_string(i) + ".";
    t[h + "ln_1.weight"] = {{D}, b + "norm1.weight"};
    t[h + "ln_1.bias"] = {{D}, b + "norm1.bias"};
    t[h + "attn.c_attn.weight"] = {{D, 3 * D}, b + "attn.qkv.weight", true};
    t[h + "attn.c_attn.bias"] = {{3 * D}, b + "attn.qkv.bias"};
    t[h + "attn.c_proj.weight"] = {{D, D}, b + "attn.proj.weight", true};
    t[h + "attn.c_proj.bias"] = {{D}, b + "attn.proj.bias"};
    t[h + "ln_2.weight"] = {{D}, b + "norm2.weight"};
    t[h + "ln_2.bias"] = {{D}, b + "norm2.bias"};
    t[h + "mlp.c_fc.weight"] = {{D, F}, b + "mlp.fc1.weight", true};
    t[h + "mlp.c_fc.bias"] = {{F}, b + "mlp.fc1.bias"};
    t[h + "mlp.c_proj.weight"] = {{F, D}, b + "mlp.fc2.weight", true};
    t[h + "mlp.c_proj.bias"] = {{D}, b + "mlp.fc2.bias"};
  }
  t["ln_f.weight"] = {{D}, "norm.weight"};
  t["ln_f.bias"] = {{D}, "norm.bias"};
  return t;
}

// "NaN", "inf" or "-inf": element i of `t`.
std::string non_finite_name(const Tensor& t, std::int64_t i) {
  double v = 0;
  dispatch_float(t.dtype(), "load_gpt2", [&](auto tag) {
    v = static_cast<double>(t.data<decltype(tag)>()[i]);
  });
  return std::isnan(v) ? "NaN" : v > 0 ? "inf" : "-inf";
}

std::int64_t json_int(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer())
    fail(where, ": \"", key, "\" should be a whole number, got ",
         it == j.end() ? std::string("nothing") : json_brief(*it));
  return it->get<std::int64_t>();
}

// Hugging Face's config.json is under 1 kB; the bound refuses /dev/zero or a wrong file.
constexpr std::uint64_t kMaxConfigBytes = 1 << 20;

GptConfig config_from_json(const std::string& path) {
  const std::string where = "'" + path + "'";
  const nlohmann::json j = parse_json_input(read_regular_file(path, kMaxConfigBytes, where), where);
  if (!j.is_object()) fail(where, " should be a JSON object");
  GptConfig c;
  c.dim = json_int(j, "n_embd", where);
  c.layers = json_int(j, "n_layer", where);
  c.heads = json_int(j, "n_head", where);
  c.vocab = json_int(j, "vocab_size", where);
  c.context = j.contains("n_positions") ? json_int(j, "n_positions", where)
                                        : json_int(j, "n_ctx", where);
  c.mlp_dim = j.contains("n_inner") && !j["n_inner"].is_null() ? json_int(j, "n_inner", where)
                                                                 : 4 * c.dim;
  c.tie_weights = true;
  std::string activation = "gelu_new";
  if (const auto it = j.find("activation_function"); it != j.end()) {
    if (!it->is_string())
      fail(where, ": \"activation_function\" should be a string (gelu_new, gelu), got ",
           json_brief(*it));
    activation = it->get<std::string>();
  }
  if (activation == "gelu_new" || activation == "gelu_pytorch_tanh") c.gelu = "tanh";
  else if (activation == "gelu") c.gelu = "erf";
  else fail(where, ": activation_function ", json_brief(activation), " is not one uwaga has (gelu_new, gelu)");
  if (j.contains("layer_norm_epsilon") &&
      (!j["layer_norm_epsilon"].is_number() || j["layer_norm_epsilon"].get<double>() != 1e-5))
    fail(where, ": layer_norm_epsilon ", json_brief(j["layer_norm_epsilon"]),
         " is not GPT-2's 1e-5, the LayerNorm ε uwaga uses");
  return c;
}

// Without config.json: the sizes from the shapes, GPT-2's head width 64 for the heads.
GptConfig config_from_shapes(const std::map<std::string, SafetensorsEntry>& file,
                             const std::string& path) {
  auto shape_of = [&](const std::string& name, std::size_t dims) {
    const auto it = file.find(name);
    if (it == file.end() || it->second.shape.size() != dims)
      fail("load_gpt2: '", path, "' has no config.json beside it, and its ", name,
           it == file.end() ? " is missing" : " is not " + std::to_string(dims) + "-d",
           ", so its sizes cannot be told");
    return it->second.shape;
  };
  GptConfig c;
  const Shape wte = shape_of("wte.weight", 2), wpe = shape_of("wpe.weight", 2);
  c.vocab = wte[0], c.dim = wte[1], c.context = wpe[0];
  c.layers = 0;
  while (file.count("h." + std::to_string(c.layers) + ".ln_1.weight")) ++c.layers;
  c.mlp_dim = c.layers > 0 ? shape_of("h.0.mlp.c_fc.weight", 2)[1] : 4 * c.dim;
  if (c.dim % 64 != 0)
    fail("load_gpt2: '", path, "' has no config.json beside it and its width ", c.dim,
         " is not a multiple of GPT-2's head width 64; put its config.json beside it");
  c.heads = c.dim / 64;
  c.tie_weights = true;
  c.gelu = "tanh";
  return c;
}

struct Checked {
  GptConfig config;
  std::map<std::string, std::string> file_name;  // short name -> the name in the file
  std::map<std::string, Gpt2Tensor> expected;
};

Checked check_checkpoint(const std::string& path) {
  const SafetensorsHeader header = read_safetensors_header(path);
  std::map<std::string, SafetensorsEntry> file;  // by short name, mask buffers left out
  Checked out;
  for (const auto& [name, entry] : header.tensors) {
    const std::string s = short_name(name);
    if (is_mask_buffer(s)) continue;
    if (file.count(s)) fail("load_gpt2: '", path, "' holds ", s, " twice (with and without \"", kPrefix, "\")");
    file[s] = entry;
    out.file_name[s] = name;
  }
  const std::string json = (std::filesystem::path(path).parent_path() / "config.json").string();
  // symlink_status: a config.json that is a broken link is named as one, not passed over.
  out.config = std::filesystem::exists(std::filesystem::symlink_status(json))
                   ? config_from_json(json)
                   : config_from_shapes(file, path);
  try {
    out.config.validate();
  } catch (const Error& e) {
    fail("load_gpt2: '", path, "': ", e.what());
  }
  out.expected = expected_tensors(out.config);
  const std::string with = "load_gpt2: '" + path + "' (" + std::to_string(out.config.layers) +
                           " layers, width " + std::to_string(out.config.dim) + ", vocabulary " +
                           std::to_string(out.config.vocab) + ")";
  for (const auto& [name, t] : out.expected) {
    const auto it = file.find(name);
    if (it == file.end()) fail(with, " lacks the tensor ", name, " ", shape_str(t.shape));
    if (it->second.shape != t.shape)
      fail(with, ": the tensor ", name, " is ", shape_str(it->second.shape), ", expected ",
           shape_str(t.shape));
  }
  for (const auto& [name, entry] : file) {
    if (out.expected.count(name)) continue;
    if (name == "lm_head.weight" && entry.shape == Shape{out.config.vocab, out.config.dim}) continue;
    fail(with, " holds the unexpected tensor ", out.file_name[name], " ", shape_str(entry.shape));
  }
  return out;
}

}  // namespace

GptConfig gpt2_config(const std::string& path) { return check_checkpoint(path).config; }

StateDict load_gpt2_state(const std::string& path, GptConfig* config) {
  Checked checked = check_checkpoint(path);
  SafetensorsFile file = load_safetensors(path);
  auto tensor = [&](const std::string& short_name) -> Tensor& {
    return file.tensors.at(checked.file_name.at(short_name));
  };
  // GPT-2 ties its head to wte; a file whose lm_head differs keeps it as a head of its own.
  Tensor head;
  if (checked.file_name.count("lm_head.weight")) {
    Tensor& lm = tensor("lm_head.weight");
    Tensor& wte = tensor("wte.weight");
    if (lm.dtype() != wte.dtype() ||
        std::memcmp(lm.raw_data(), wte.raw_data(), static_cast<std::size_t>(wte.numel()) * dtype_size(wte.dtype())) != 0) {
      checked.config.tie_weights = false;
      head = lm;
    }
  }
  // As load_checkpoint refuses a uwaga checkpoint holding NaN or inf: a model would read it
  // without complaint and write garbage (or a loss of NaN).
  for (const auto& [name, file_name] : checked.file_name)
    if (const std::int64_t at = first_non_finite(file.tensors.at(file_name)); at >= 0)
      fail("load_gpt2: '", path, "': the tensor ", file_name, " holds ",
           non_finite_name(file.tensors.at(file_name), at), " at index ", at,
           " (a damaged file, or saved from a run that diverged?)");
  StateDict state;
  for (const auto& [name, t] : checked.expected) {
    Tensor& value = tensor(name);
    state[t.uwaga_name] = t.conv1d ? transpose(value, 0, 1) : value;  // (in, out) -> (out, in)
  }
  if (head.defined()) state["head.weight"] = head;
  if (config) *config = checked.config;
  return state;
}

std::unique_ptr<Gpt> load_gpt2(const std::string& path) {
  GptConfig config;
  const StateDict state = load_gpt2_state(path, &config);
  std::unique_ptr<Gpt> model = built_to_load<Gpt>(config);
  model->load_state_dict(state);
  model->eval();
  return model;
}

void save_gpt2(const Gpt& model, const std::string& dir) {
  const GptConfig& c = model.config;
  const StateDict state = model.state_dict();
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, t] : expected_tensors(c)) {
    const Tensor& value = state.at(t.uwaga_name);
    tensors[kPrefix + name] = t.conv1d ? transpose(value, 0, 1) : value;  // (in, out)
  }
  if (!c.tie_weights) tensors["lm_head.weight"] = state.at("head.weight");
  nlohmann::json config = {
      {"architectures", {"GPT2LMHeadModel"}},
      {"model_type", "gpt2"},
      {"vocab_size", c.vocab},
      {"n_positions", c.context},
      {"n_ctx", c.context},
      {"n_embd", c.dim},
      {"n_layer", c.layers},
      {"n_head", c.heads},
      {"n_inner", c.mlp_dim == 4 * c.dim ? nlohmann::json(nullptr) : nlohmann::json(c.mlp_dim)},
      {"activation_function", c.gelu == "tanh" ? "gelu_new" : "gelu"},
      {"layer_norm_epsilon", 1e-5},
      {"tie_word_embeddings", c.tie_weights},
      {"torch_dtype", "float32"}};
  std::filesystem::create_directories(dir);
  save_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}});
  write_file_atomically(dir + "/config.json", config.dump(2) + "\n");
}

}  // namespace uwaga::nn
