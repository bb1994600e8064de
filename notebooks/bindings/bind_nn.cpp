// uwaga.nn: the modules (calling one runs its forward) and the attention functions. Masks are
// keyword arguments: key_padding (B, S) nonzero at padded keys, causal=True for the decoder's
// self-attention. return_weights=True also returns the attention weights A.
#include <pybind11/stl.h>

#include <cxxabi.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <typeinfo>

#include "nn/attention.h"
#include "nn/attention_rollout.h"
#include "nn/decoding.h"
#include "nn/pad_sequences.h"
#include "nn/embedding.h"
#include "nn/gelu.h"
#include "nn/gpt.h"
#include "nn/gpt2_checkpoint.h"
#include "nn/pose/keypoint_heatmaps.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "nn/mlp.h"
#include "nn/multi_head_attention.h"
#include "nn/positional_encoding.h"
#include "nn/relu.h"
#include "nn/sampling.h"
#include "nn/scaled_dot_product_attention.h"
#include "nn/self_attention.h"
#include "nn/seq2seq_transformer.h"
#include "nn/transformer_decoder_block.h"
#include "nn/transformer_encoder_block.h"
#include "nn/vision_transformer.h"
#include "nn/pose/vit_pose.h"
#include "notebooks/bindings/bindings.h"

namespace uwaga::python {
namespace {

// "SelfAttention" for a uwaga::nn::SelfAttention.
std::string class_name(const nn::Module& module) {
  const char* mangled = typeid(module).name();
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && readable ? readable : mangled;
  std::free(readable);
  const std::size_t colon = name.rfind("::");
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

// The module tree as PyTorch prints it: a leaf on one line with its parameters' shapes, a module
// with submodules as "Name(" then its own parameters and each submodule "(name): ..." indented.
// (A name may hold dots of its own, "blocks.0": what is inside a submodule is what starts with its
// name and a dot.)
std::string module_repr(nn::Module& module, const std::string& indent = "") {
  const auto modules = module.named_modules();
  auto inside_a_submodule = [&](const std::string& name) {
    for (const auto& [sub, m] : modules)
      if (name.size() > sub.size() && name.compare(0, sub.size() + 1, sub + ".") == 0) return true;
    return false;
  };
  std::vector<std::string> params, children;
  for (const auto& [name, p] : module.named_parameters())
    if (!inside_a_submodule(name)) params.push_back(name + " " + shape_str(p.shape()));
  for (const auto& [name, child] : modules)
    if (!inside_a_submodule(name))
      children.push_back("(" + name + "): " + module_repr(*child, indent + "  "));
  std::string out = class_name(module) + "(";
  if (children.empty()) {
    for (std::size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + params[i];
    return out + ")";
  }
  out += "\n";
  for (const std::string& p : params) out += indent + "  " + p + "\n";
  for (const std::string& c : children) out += indent + "  " + c + "\n";
  return out + indent + ")";
}

}  // namespace

nn::AttentionMask make_mask(const std::optional<Tensor>& key_padding, bool causal) {
  nn::AttentionMask mask;
  if (key_padding) mask.key_padding = *key_padding;
  mask.causal = causal;
  return mask;
}

namespace {

using nn::Module;
template <class M>
using ModuleClass = py::class_<M, Module, std::shared_ptr<M>>;
// A module the Trainer can train on its own (nn/model.h).
template <class M>
using ModelClass = py::class_<M, nn::Model, std::shared_ptr<M>>;

// A tensor a module may legitimately go without (Linear's bias with bias=False): None then.
py::object tensor_or_none(const Tensor& t) { return t.defined() ? py::cast(t) : py::none(); }

// The attention weights a layer kept in its last forward: undefined until keep_attention(True)
// and a forward, which the error says rather than handing Python an undefined tensor.
const Tensor& kept_attention(const Tensor& A, const char* where, const char* keep) {
  if (!A.defined())
    fail(where, ": no attention weights kept; call ", keep, "(True) and run a forward first");
  return A;
}
std::vector<Tensor> kept_attention(std::vector<Tensor> maps, const char* where,
                                   const char* keep) {
  for (const Tensor& A : maps) kept_attention(A, where, keep);
  return maps;
}

// Y, or (Y, A) when the weights were asked for.
py::object with_weights(const Tensor& Y, const Tensor& A, bool return_weights) {
  if (return_weights) return py::make_tuple(Y, A);
  return py::cast(Y);
}

template <class Fn>
auto attention_function(Fn fn) {
  return [fn](const Tensor& Q, const Tensor& K, const Tensor& V,
              const std::optional<Tensor>& key_padding, bool causal, bool return_weights) {
    Tensor A;
    Tensor Y = fn(Q, K, V, make_mask(key_padding, causal), return_weights ? &A : nullptr);
    return with_weights(Y, A, return_weights);
  };
}

void bind_module(py::module_& m) {
  py::class_<Module, std::shared_ptr<Module>>(m, "Module",
                                              "Named parameters and submodules, PyTorch's names.")
      .def("named_parameters", &Module::named_parameters)
      .def("named_buffers", &Module::named_buffers)
      .def("parameters", &Module::parameters)
      .def("num_parameters", &Module::num_parameters)
      .def("train", &Module::train, py::arg("on") = true)
      .def("eval", &Module::eval)
      .def_property_readonly("training", &Module::is_training)
      .def("zero_grad", &Module::zero_grad)
      .def("to", &Module::to, py::arg("dtype"),
           "Converts every parameter (and floating-point buffer) in place.")
      .def("state_dict", &Module::state_dict)
      .def("load_state_dict", &Module::load_state_dict, py::arg("state"))
      .def("__repr__", [](Module& module) { return module_repr(module); },
           "The module tree with each parameter's shape, as PyTorch prints it.");
  py::class_<nn::Model, Module, std::shared_ptr<nn::Model>>(
      m, "Model", "A module the Trainer can train: forward_batch(inputs) and replicas.")
      .def("forward_batch", &nn::Model::forward_batch, py::arg("inputs"));
}

// A loss written in Python (subclass uwaga.nn.Loss): __call__(output, targets) returns the mean
// loss (a one-element Tensor), count(targets) how many targets the mean runs over, and
// correct(output, targets), optionally, how many it predicts right. What each returns is checked
// and the method named when it is the wrong type. The trainer calls it from its threads without
// the GIL; each call takes it back.
class PyLoss : public nn::Loss {
 public:
  Tensor operator()(const Tensor& output, const Tensor& targets) const override {
    py::gil_scoped_acquire gil;
    py::object r = call("__call__", output, targets);
    if (!py::isinstance<Tensor>(r)) throw wrong_return("__call__", "a uwaga.Tensor", r);
    return r.cast<Tensor>();
  }
  std::int64_t count(const Tensor& targets) const override {
    py::gil_scoped_acquire gil;
    py::object n = call("count", targets);
    if (!PyIndex_Check(n.ptr()) || py::isinstance<py::bool_>(n))
      throw wrong_return("count", "an int", n);
    return n.cast<std::int64_t>();
  }
  std::int64_t correct(const Tensor& output, const Tensor& targets) const override {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const nn::Loss*>(this), "correct");
    if (!f) return -1;
    py::object n = f(output, targets);
    if (!PyIndex_Check(n.ptr()) || py::isinstance<py::bool_>(n))
      throw wrong_return("correct", "an int", n);
    return n.cast<std::int64_t>();
  }

 private:
  template <class... Args>
  py::object call(const char* name, const Args&... args) const {
    py::function f = py::get_override(static_cast<const nn::Loss*>(this), name);
    if (!f) {
      PyErr_Format(PyExc_NotImplementedError, "a Loss subclass must define %s()", name);
      throw py::error_already_set();
    }
    return f(args...);
  }
  static py::type_error wrong_return(const char* method, const char* expected,
                                     const py::handle& got) {
    return py::type_error("Loss." + std::string(method) + "() must return " + expected +
                          ", got " + type_name(got));
  }
};

void bind_losses(py::module_& m) {
  py::class_<nn::Loss, PyLoss>(m, "Loss",
                               "What the Trainer minimises: subclass it and define "
                               "__call__(output, targets) (a one-element Tensor, the mean loss), "
                               "count(targets) (an int: the targets the mean runs over) and, "
                               "optionally, correct(output, targets) (an int).")
      .def(py::init<>())
      .def("__call__", &nn::Loss::operator(), py::arg("output"), py::arg("targets"))
      .def("count", &nn::Loss::count, py::arg("targets"))
      .def("correct", &nn::Loss::correct, py::arg("output"), py::arg("targets"));
  py::class_<nn::CrossEntropyLoss, nn::Loss>(m, "CrossEntropyLoss",
                                             "Softmax cross-entropy of logits (..., C) against "
                                             "class ids (...); ignore_index counts nowhere.")
      .def(py::init([](std::int64_t ignore_index, double label_smoothing) {
             return nn::CrossEntropyLoss({ignore_index, label_smoothing});
           }),
           py::arg("ignore_index") = -100, py::arg("label_smoothing") = 0.0);
  py::class_<nn::MeanSquaredError, nn::Loss>(m, "MeanSquaredError", "mean((output - targets)^2)")
      .def(py::init<>());
}

void bind_layers(py::module_& m) {
  ModelClass<nn::Linear>(m, "Linear", "y = x W^T + b, W (out, in)")
      .def(py::init([](std::int64_t in_features, std::int64_t out_features, Generator& gen,
                       bool bias) {
             return std::make_shared<nn::Linear>(
                 nn::LinearOptions{.in = in_features, .out = out_features, .bias = bias}, gen);
           }),
           py::arg("in_features"), py::arg("out_features"), py::arg("gen"), py::arg("bias") = true)
      .def("__call__", &nn::Linear::forward, py::arg("x"))
      .def_readonly("weight", &nn::Linear::weight)
      .def_property_readonly("bias",
                             [](const nn::Linear& l) { return tensor_or_none(l.bias); },
                             "b, or None for a Linear made with bias=False");

  ModuleClass<nn::LayerNorm>(m, "LayerNorm", "LN(x) = gamma * (x - mu) / sigma + beta")
      .def(py::init<std::int64_t, double>(), py::arg("dim"), py::arg("eps") = 1e-5)
      .def("__call__", &nn::LayerNorm::forward, py::arg("x"))
      .def_readonly("weight", &nn::LayerNorm::weight)
      .def_readonly("bias", &nn::LayerNorm::bias)
      .def_readonly("eps", &nn::LayerNorm::eps);
  m.def("layer_norm", &nn::layer_norm, py::arg("x"), py::arg("weight"), py::arg("bias"),
        py::arg("eps") = 1e-5, "One node with the hand-derived backward.");
  m.def("layer_norm_composed", &nn::layer_norm_composed, py::arg("x"), py::arg("weight"),
        py::arg("bias"), py::arg("eps") = 1e-5, "From mean, sub, mul, sqrt: autograd derives it.");

  ModuleClass<nn::Embedding>(m, "Embedding")
      .def(py::init<std::int64_t, std::int64_t, Generator&>(), py::arg("num_embeddings"),
           py::arg("dim"), py::arg("gen"))
      .def("__call__", &nn::Embedding::forward, py::arg("ids"))
      .def_readonly("weight", &nn::Embedding::weight);

  py::enum_<nn::GeluApproximation>(m, "GeluApproximation")
      .value("none", nn::GeluApproximation::none)
      .value("tanh", nn::GeluApproximation::tanh);
  ModuleClass<nn::GELU>(m, "GELU")
      .def(py::init<nn::GeluApproximation>(), py::arg("approximate") = nn::GeluApproximation::none)
      .def("__call__", &nn::GELU::forward);
  ModuleClass<nn::ReLU>(m, "ReLU").def(py::init<>()).def("__call__", &nn::ReLU::forward);

  ModuleClass<nn::MLP>(m, "MLP", "fc2(GELU(fc1(x)))")
      .def(py::init([](std::int64_t dim, std::int64_t hidden, Generator& gen) {
             return std::make_shared<nn::MLP>(nn::MLPOptions{.dim = dim, .hidden = hidden}, gen);
           }),
           py::arg("dim"), py::arg("hidden"), py::arg("gen"))
      .def("__call__", &nn::MLP::forward, py::arg("x"))
      .def_readonly("fc1", &nn::MLP::fc1)
      .def_readonly("fc2", &nn::MLP::fc2);

  m.def("sinusoidal_positional_encoding", &nn::sinusoidal_positional_encoding,
        py::arg("length"), py::arg("dim"), py::arg("dtype") = DType::Float32);
}

void bind_attention(py::module_& m) {
  m.def("scaled_dot_product_attention",
        attention_function([](auto&&... a) { return nn::scaled_dot_product_attention(a...); }),
        py::arg("Q"), py::arg("K"), py::arg("V"), py::arg("key_padding") = py::none(),
        py::arg("causal") = false, py::arg("return_weights") = false,
        "Y = softmax(Q K^T / sqrt(d_k)) V as one node with a hand-derived backward.");
  m.def("scaled_dot_product_attention_composed",
        attention_function(
            [](auto&&... a) { return nn::scaled_dot_product_attention_composed(a...); }),
        py::arg("Q"), py::arg("K"), py::arg("V"), py::arg("key_padding") = py::none(),
        py::arg("causal") = false, py::arg("return_weights") = false,
        "The same formula from matmul, masked_fill and softmax_composed.");

  ModuleClass<nn::Attention>(m, "Attention",
                             "The notes' general layer: K = X W_K, V = X W_V, "
                             "Y = softmax(Q K^T / sqrt(D_Q)) V")
      .def(py::init([](std::int64_t d_x, std::int64_t d_q, std::int64_t d_v, Generator& gen) {
             return std::make_shared<nn::Attention>(
                 nn::AttentionOptions{.d_x = d_x, .d_q = d_q, .d_v = d_v}, gen);
           }),
           py::arg("d_x"), py::arg("d_q"), py::arg("d_v"), py::arg("gen"))
      .def("__call__",
           [](const nn::Attention& a, const Tensor& Q, const Tensor& X,
              const std::optional<Tensor>& key_padding, bool causal, bool return_weights) {
             Tensor A;
             Tensor Y =
                 a.forward(Q, X, make_mask(key_padding, causal), return_weights ? &A : nullptr);
             return with_weights(Y, A, return_weights);
           },
           py::arg("Q"), py::arg("X"), py::arg("key_padding") = py::none(),
           py::arg("causal") = false, py::arg("return_weights") = false)
      .def_readonly("W_K", &nn::Attention::W_K)
      .def_readonly("W_V", &nn::Attention::W_V);

  ModuleClass<nn::SelfAttention>(m, "SelfAttention",
                                 "Q, K, V = X W_Q, X W_K, X W_V; Y = softmax(Q K^T / sqrt(d_k)) V")
      .def(py::init([](std::int64_t d_x, std::int64_t d_k, std::int64_t d_v, Generator& gen) {
             return std::make_shared<nn::SelfAttention>(
                 nn::SelfAttentionOptions{.d_x = d_x, .d_k = d_k, .d_v = d_v}, gen);
           }),
           py::arg("d_x"), py::arg("d_k"), py::arg("d_v"), py::arg("gen"))
      .def("__call__",
           [](const nn::SelfAttention& a, const Tensor& X, const std::optional<Tensor>& key_padding,
              bool causal, bool return_weights) {
             Tensor A;
             Tensor Y = a.forward(X, make_mask(key_padding, causal), return_weights ? &A : nullptr);
             return with_weights(Y, A, return_weights);
           },
           py::arg("X"), py::arg("key_padding") = py::none(), py::arg("causal") = false,
           py::arg("return_weights") = false)
      .def_readonly("W_Q", &nn::SelfAttention::W_Q)
      .def_readonly("W_K", &nn::SelfAttention::W_K)
      .def_readonly("W_V", &nn::SelfAttention::W_V);

  py::enum_<nn::AttentionPath>(m, "AttentionPath",
                               "How MultiHeadAttention computes its heads; the same numbers")
      .value("fast", nn::AttentionPath::fast,
             "every head at once in the fused kernel, with a hand-derived backward")
      .value("reference", nn::AttentionPath::reference,
             "the formula step by step from primitive ops: split_heads, attention per head, "
             "merge_heads, W_O");

  ModuleClass<nn::MultiHeadAttention>(m, "MultiHeadAttention",
                                      "Concat(head_1, ..., head_h) W_O, "
                                      "head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)")
      .def(py::init([](std::int64_t dim, std::int64_t heads, Generator& gen, bool cross,
                       nn::AttentionPath path) {
             return std::make_shared<nn::MultiHeadAttention>(
                 nn::MultiHeadAttentionOptions{
                     .dim = dim, .heads = heads, .cross = cross, .path = path},
                 gen);
           }),
           py::arg("dim"), py::arg("heads"), py::arg("gen"), py::arg("cross") = false,
           py::arg("path") = nn::AttentionPath::fast)
      .def("__call__",
           [](nn::MultiHeadAttention& a, const Tensor& x, const std::optional<Tensor>& memory,
              const std::optional<Tensor>& key_padding, bool causal) {
             const nn::AttentionMask mask = make_mask(key_padding, causal);
             return memory ? a.forward(x, *memory, mask) : a.forward(x, mask);
           },
           py::arg("x"), py::arg("memory") = py::none(), py::arg("key_padding") = py::none(),
           py::arg("causal") = false)
      .def("keep_attention", &nn::MultiHeadAttention::keep_attention, py::arg("on") = true,
           "Keep the per-head weights A (B, h, T, S) of every forward in .attention.")
      .def_property_readonly("attention",
                             [](const nn::MultiHeadAttention& a) {
                               return kept_attention(a.attention(), "MultiHeadAttention.attention",
                                                     "keep_attention");
                             })
      .def_property_readonly("dim", [](const nn::MultiHeadAttention& a) { return a.options.dim; })
      .def_property_readonly("heads",
                             [](const nn::MultiHeadAttention& a) { return a.options.heads; })
      .def_property_readonly("path",
                             [](const nn::MultiHeadAttention& a) { return a.options.path; })
      .def_readonly("head_dim", &nn::MultiHeadAttention::head_dim)
      .def_readonly("qkv", &nn::MultiHeadAttention::qkv)
      .def_readonly("q", &nn::MultiHeadAttention::q)
      .def_readonly("kv", &nn::MultiHeadAttention::kv)
      .def_readonly("proj", &nn::MultiHeadAttention::proj);
  m.def("split_heads", &nn::split_heads, py::arg("x"), py::arg("heads"),
        "(B, T, h*d) -> (B, h, T, d): head i is columns i*d ... (i+1)*d");
  m.def("merge_heads", &nn::merge_heads, py::arg("heads"), "(B, h, T, d) -> (B, T, h*d)");
}

void bind_blocks(py::module_& m) {
  ModuleClass<nn::TransformerEncoderBlock>(m, "TransformerEncoderBlock",
                                           "z' = MSA(LN(z)) + z;  z = MLP(LN(z')) + z'")
      .def(py::init([](std::int64_t dim, std::int64_t heads, std::int64_t mlp_dim,
                       Generator& gen) {
             return std::make_shared<nn::TransformerEncoderBlock>(
                 nn::TransformerEncoderBlockOptions{.dim = dim, .heads = heads, .mlp_dim = mlp_dim},
                 gen);
           }),
           py::arg("dim"), py::arg("heads"), py::arg("mlp_dim"), py::arg("gen"))
      .def("__call__",
           [](nn::TransformerEncoderBlock& b, const Tensor& z,
              const std::optional<Tensor>& key_padding, bool causal) {
             return b.forward(z, make_mask(key_padding, causal));
           },
           py::arg("z"), py::arg("key_padding") = py::none(), py::arg("causal") = false)
      .def_readonly("norm1", &nn::TransformerEncoderBlock::norm1)
      .def_readonly("attn", &nn::TransformerEncoderBlock::attn)
      .def_readonly("norm2", &nn::TransformerEncoderBlock::norm2)
      .def_readonly("mlp", &nn::TransformerEncoderBlock::mlp);

  ModuleClass<nn::TransformerDecoderBlock>(m, "TransformerDecoderBlock")
      .def(py::init([](std::int64_t dim, std::int64_t heads, std::int64_t mlp_dim,
                       Generator& gen) {
             return std::make_shared<nn::TransformerDecoderBlock>(
                 nn::TransformerDecoderBlockOptions{.dim = dim, .heads = heads, .mlp_dim = mlp_dim},
                 gen);
           }),
           py::arg("dim"), py::arg("heads"), py::arg("mlp_dim"), py::arg("gen"))
      .def("__call__",
           [](nn::TransformerDecoderBlock& b, const Tensor& x, const Tensor& memory,
              const std::optional<Tensor>& self_padding,
              const std::optional<Tensor>& memory_padding) {
             return b.forward(x, memory, self_padding.value_or(Tensor()),
                              memory_padding.value_or(Tensor()));
           },
           py::arg("x"), py::arg("memory"), py::arg("self_padding") = py::none(),
           py::arg("memory_padding") = py::none())
      .def_readonly("norm1", &nn::TransformerDecoderBlock::norm1)
      .def_readonly("self_attn", &nn::TransformerDecoderBlock::self_attn)
      .def_readonly("norm2", &nn::TransformerDecoderBlock::norm2)
      .def_readonly("cross_attn", &nn::TransformerDecoderBlock::cross_attn)
      .def_readonly("norm3", &nn::TransformerDecoderBlock::norm3)
      .def_readonly("mlp", &nn::TransformerDecoderBlock::mlp);
}

void bind_vit(py::module_& m) {
  py::class_<nn::VitConfig>(m, "VitConfig")
      .def(py::init([](const py::kwargs& kw) {
        nn::VitConfig c;
        py::object self = py::cast(c);
        for (auto item : kw) py::setattr(self, item.first, item.second);
        return self.cast<nn::VitConfig>();
      }))
      .def_readwrite("image_size", &nn::VitConfig::image_size)
      .def_readwrite("channels", &nn::VitConfig::channels)
      .def_readwrite("patch", &nn::VitConfig::patch)
      .def_readwrite("dim", &nn::VitConfig::dim)
      .def_readwrite("depth", &nn::VitConfig::depth)
      .def_readwrite("heads", &nn::VitConfig::heads)
      .def_readwrite("mlp_dim", &nn::VitConfig::mlp_dim)
      .def_readwrite("num_classes", &nn::VitConfig::num_classes)
      .def_readwrite("drop_path", &nn::VitConfig::drop_path)
      .def_readwrite("dropout", &nn::VitConfig::dropout)
      .def_readwrite("attention_dropout", &nn::VitConfig::attention_dropout)
      .def_readwrite("cct_details", &nn::VitConfig::cct_details)
      .def_readwrite("stem", &nn::VitConfig::stem)
      .def_readwrite("pool", &nn::VitConfig::pool)
      .def("num_patches", &nn::VitConfig::num_patches)
      .def("tokens", &nn::VitConfig::tokens)
      .def("patch_dim", &nn::VitConfig::patch_dim)
      .def("forward_flops", &nn::VitConfig::forward_flops)
      .def("validate", &nn::VitConfig::validate)
      .def("to_json", &nn::VitConfig::to_json)
      .def("__repr__", [](const nn::VitConfig& c) { return "VitConfig(" + c.to_json() + ")"; });

  m.def("patchify", &nn::patchify, py::arg("images"), py::arg("patch"),
        "(B, C, H, W) -> (B, N, P*P*C), patches in raster order");
  ModelClass<nn::VisionTransformer>(m, "VisionTransformer")
      .def(py::init<const nn::VitConfig&, Generator&>(), py::arg("config"), py::arg("gen"))
      .def("__call__", &nn::VisionTransformer::forward, py::arg("images"),
           "(B, C, H, W) -> logits (B, classes)")
      .def("keep_attention", &nn::VisionTransformer::keep_attention, py::arg("on") = true)
      .def("attention_maps",
           [](const nn::VisionTransformer& v) {
             return kept_attention(v.attention_maps(), "VisionTransformer.attention_maps",
                                   "keep_attention");
           },
           "One A (B, h, T, T) per block, from the last forward (T = N+1 with a class token).")
      .def("pooling_weights",
           [](const nn::VisionTransformer& v) {
             if (!v.pooling_weights().defined())
               fail("VisionTransformer.pooling_weights: none kept; the model must pool with "
                    "pool 'seq' and keep_attention() must be on during the forward");
             return v.pooling_weights();
           },
           "Sequence pooling's weights a (B, T) from the last forward with keep_attention on.")
      .def_readonly("config", &nn::VisionTransformer::config)
      // The backbone's layers, under the names its parameters have (nn/vit_backbone.h).
      .def_property_readonly("patch_embed",
                             [](const nn::VisionTransformer& v) { return v.backbone->patch_embed; })
      .def_property_readonly("cls_token",  // None with pool "seq"
                             [](const nn::VisionTransformer& v) {
                               return tensor_or_none(v.backbone->cls_token);
                             })
      .def_property_readonly("pos_embed",
                             [](const nn::VisionTransformer& v) { return v.backbone->pos_embed; })
      .def_property_readonly("blocks",
                             [](const nn::VisionTransformer& v) { return v.backbone->blocks; })
      .def_property_readonly("norm", [](const nn::VisionTransformer& v) { return v.backbone->norm; })
      .def_readonly("attention_pool", &nn::VisionTransformer::attention_pool)
      .def_readonly("head", &nn::VisionTransformer::head);
  m.def("class_token_attention", &nn::class_token_attention, py::arg("A"),
        "A (B, h, T, T) -> (B, T-1): the class token's row, mean over heads, over the patches");
  m.def("attention_rollout", &nn::attention_rollout, py::arg("maps"),
        "R = rownorm(A_L/2 + I/2) ... rownorm(A_1/2 + I/2), (B, T, T)");
}

void bind_seq2seq(py::module_& m) {
  py::class_<nn::Seq2SeqConfig>(m, "Seq2SeqConfig")
      .def(py::init<>())
      .def_readwrite("src_vocab", &nn::Seq2SeqConfig::src_vocab)
      .def_readwrite("tgt_vocab", &nn::Seq2SeqConfig::tgt_vocab)
      .def_readwrite("dim", &nn::Seq2SeqConfig::dim)
      .def_readwrite("heads", &nn::Seq2SeqConfig::heads)
      .def_readwrite("encoder_layers", &nn::Seq2SeqConfig::encoder_layers)
      .def_readwrite("decoder_layers", &nn::Seq2SeqConfig::decoder_layers)
      .def_readwrite("mlp_dim", &nn::Seq2SeqConfig::mlp_dim)
      .def_readwrite("max_length", &nn::Seq2SeqConfig::max_length)
      .def_readwrite("positions", &nn::Seq2SeqConfig::positions)
      .def_readwrite("dropout", &nn::Seq2SeqConfig::dropout)
      .def_readwrite("pad_id", &nn::Seq2SeqConfig::pad_id)
      .def("validate", &nn::Seq2SeqConfig::validate)
      .def("to_json", &nn::Seq2SeqConfig::to_json)
      .def("__repr__",
           [](const nn::Seq2SeqConfig& c) { return "Seq2SeqConfig(" + c.to_json() + ")"; });

  m.def("pad_sequences", &nn::pad_sequences, py::arg("sequences"), py::arg("pad") = 0);
  ModelClass<nn::Seq2SeqTransformer>(m, "Seq2SeqTransformer")
      .def(py::init<const nn::Seq2SeqConfig&, Generator&>(), py::arg("config"), py::arg("gen"))
      .def("__call__", &nn::Seq2SeqTransformer::forward, py::arg("src"), py::arg("tgt_in"),
           "Teacher forcing: src (B, S), tgt_in (B, T) -> logits (B, T, V_tgt)")
      .def("encode", &nn::Seq2SeqTransformer::encode, py::arg("src"))
      .def("decode", &nn::Seq2SeqTransformer::decode, py::arg("tgt_in"), py::arg("memory"),
           py::arg("src_padding"))
      .def("padding_mask", &nn::Seq2SeqTransformer::padding_mask, py::arg("ids"))
      .def("keep_cross_attention", &nn::Seq2SeqTransformer::keep_cross_attention,
           py::arg("on") = true)
      .def("cross_attention_maps",
           [](const nn::Seq2SeqTransformer& s) {
             return kept_attention(s.cross_attention_maps(),
                                   "Seq2SeqTransformer.cross_attention_maps",
                                   "keep_cross_attention");
           },
           "One A (B, h, T, S) per decoder block, from the last forward.")
      .def_readonly("config", &nn::Seq2SeqTransformer::config)
      .def_readonly("encoder", &nn::Seq2SeqTransformer::encoder)
      .def_readonly("decoder", &nn::Seq2SeqTransformer::decoder);

  py::class_<nn::DecodingOptions>(m, "DecodingOptions")
      .def(py::init<>())
      .def_readwrite("bos_id", &nn::DecodingOptions::bos_id)
      .def_readwrite("eos_id", &nn::DecodingOptions::eos_id)
      .def_readwrite("max_length", &nn::DecodingOptions::max_length)
      .def_readwrite("beam", &nn::DecodingOptions::beam)
      .def_readwrite("length_penalty", &nn::DecodingOptions::length_penalty);
  py::class_<nn::Hypothesis>(m, "Hypothesis")
      .def_readonly("tokens", &nn::Hypothesis::tokens)
      .def_readonly("score", &nn::Hypothesis::score)
      .def_readonly("finished", &nn::Hypothesis::finished);
  m.def("greedy_decode", &nn::greedy_decode, py::arg("model"), py::arg("sources"),
        py::arg("options") = nn::DecodingOptions());
  m.def("beam_search", &nn::beam_search, py::arg("model"), py::arg("source"),
        py::arg("options") = nn::DecodingOptions());
}

// The decoder-only GPT (nn/gpt.h) and writing text with it (nn/sampling.h).
void bind_gpt(py::module_& m) {
  py::class_<nn::GptConfig>(m, "GptConfig")
      .def(py::init([](const py::kwargs& kw) {
        py::object self = py::cast(nn::GptConfig{});
        for (auto item : kw) py::setattr(self, item.first, item.second);
        return self.cast<nn::GptConfig>();
      }))
      .def_readwrite("vocab", &nn::GptConfig::vocab)
      .def_readwrite("context", &nn::GptConfig::context)
      .def_readwrite("dim", &nn::GptConfig::dim)
      .def_readwrite("layers", &nn::GptConfig::layers)
      .def_readwrite("heads", &nn::GptConfig::heads)
      .def_readwrite("mlp_dim", &nn::GptConfig::mlp_dim)
      .def_readwrite("dropout", &nn::GptConfig::dropout)
      .def_readwrite("tie_weights", &nn::GptConfig::tie_weights)
      .def_readwrite("gelu", &nn::GptConfig::gelu)
      .def("validate", &nn::GptConfig::validate)
      .def("to_json", &nn::GptConfig::to_json)
      .def_static("from_json", &nn::GptConfig::from_json, py::arg("json"))
      .def("__repr__", [](const nn::GptConfig& c) { return "GptConfig(" + c.to_json() + ")"; });

  py::class_<nn::KvCache>(m, "KvCache",
                          "The keys and values of the tokens a Gpt has read, one pair per block, "
                          "for forward_cached.")
      .def(py::init<>())
      .def("__len__", &nn::KvCache::length, "t: the tokens cached")
      .def("clear", &nn::KvCache::clear)
      .def_readonly("K", &nn::KvCache::K, "one (B, h, t, d_k) per block")
      .def_readonly("V", &nn::KvCache::V, "one (B, h, t, d_k) per block");

  ModelClass<nn::Gpt>(m, "Gpt",
                      "logits = LN(Block_L(... Block_1(W_tok[x] + W_pos) ...)) W_head^T, "
                      "causal self-attention in every block")
      .def(py::init<const nn::GptConfig&, Generator&>(), py::arg("config"), py::arg("gen"))
      .def("__call__", &nn::Gpt::forward, py::arg("ids"),
           "ids (B, T) int64 -> logits (B, T, V): row t scores the token after ids[:, t]")
      .def("forward_cached", &nn::Gpt::forward_cached, py::arg("ids"), py::arg("cache"),
           "The logits (B, V) of the token after `ids` (B, n), the cache holding the keys and "
           "values of the tokens before them (the prompt first, then one token at a time); "
           "appends theirs.")
      .def(
          "keep_attention",
          [](nn::Gpt& g, bool on) {
            for (auto& block : g.blocks) block->attn->keep_attention(on);
          },
          py::arg("on") = true, "Keep every block's causal attention weights A in each forward.")
      .def(
          "attention_maps",
          [](const nn::Gpt& g) {
            std::vector<Tensor> maps;
            for (const auto& block : g.blocks) maps.push_back(block->attn->attention());
            return kept_attention(maps, "Gpt.attention_maps", "keep_attention");
          },
          "One A (B, h, T, T) per block from the last forward (not forward_cached); row t is "
          "zero after column t.")
      .def_readonly("config", &nn::Gpt::config)
      .def_readonly("token_embed", &nn::Gpt::token_embed)
      .def_readonly("pos_embed", &nn::Gpt::pos_embed)
      .def_readonly("blocks", &nn::Gpt::blocks)
      .def_readonly("norm", &nn::Gpt::norm)
      .def_property_readonly(
          "head", [](const nn::Gpt& g) { return g.head ? py::cast(g.head) : py::none(); },
          "W_head, or None when tied to the token table");

  py::class_<nn::SamplingOptions>(m, "SamplingOptions",
                                  "temperature (0: greedy), top_k (0: off), top_p (1: off)")
      .def(py::init([](double temperature, std::int64_t top_k, double top_p) {
             return nn::SamplingOptions{temperature, top_k, top_p};
           }),
           py::arg("temperature") = 1.0, py::arg("top_k") = 0, py::arg("top_p") = 1.0)
      .def_readwrite("temperature", &nn::SamplingOptions::temperature)
      .def_readwrite("top_k", &nn::SamplingOptions::top_k)
      .def_readwrite("top_p", &nn::SamplingOptions::top_p)
      .def("validate", &nn::SamplingOptions::validate, py::arg("vocab"));
  m.def(
      "sample_token",
      [](const std::vector<double>& logits, const nn::SamplingOptions& options, Generator& gen) {
        if (logits.empty()) fail("sample_token: no logits; expected a row of V scores");
        for (std::size_t i = 0; i < logits.size(); ++i)
          if (!std::isfinite(logits[i])) fail("sample_token: logits[", i, "] is ", logits[i]);
        options.validate(static_cast<std::int64_t>(logits.size()));
        return nn::sample_token(logits, options, gen);
      },
      py::arg("logits"), py::arg("options"), py::arg("gen"),
      "One token id drawn from a row of V logits with temperature, top-k and top-p.");

  // The stream keeps a reference to the model: keep_alive holds the Python object too.
  py::class_<nn::TokenStream>(m, "TokenStream",
                              "Generation from a prompt, one token per next(); the model runs in "
                              "eval mode (restored when the stream is deleted).")
      .def(py::init([](nn::Gpt& model, const py::handle& prompt,
                       const nn::SamplingOptions& options, std::uint64_t seed, bool use_cache) {
             return std::make_unique<nn::TokenStream>(
                 model, ids_from(prompt, "TokenStream(prompt)"), options, seed, use_cache);
           }),
           py::arg("model"), py::arg("prompt"), py::arg("options") = nn::SamplingOptions(),
           py::arg("seed") = 1, py::arg("use_cache") = true, py::keep_alive<1, 2>())
      .def("next", &nn::TokenStream::next, py::call_guard<py::gil_scoped_release>())
      .def(
          "take",
          [](nn::TokenStream& s, std::int64_t count) {
            if (count < 0) fail("TokenStream.take: count must be >= 0, got ", count);
            std::vector<std::int64_t> drawn;
            for (std::int64_t i = 0; i < count; ++i) drawn.push_back(s.next());
            return drawn;
          },
          py::arg("count"), py::call_guard<py::gil_scoped_release>(),
          "The next `count` tokens, as a list.")
      .def_property_readonly("tokens", [](const nn::TokenStream& s) { return s.tokens(); },
                             "The prompt and every token drawn so far.");
}

void bind_pose(py::module_& m) {
  m.def("gaussian_heatmaps", &nn::gaussian_heatmaps, py::arg("x"), py::arg("y"),
        py::arg("visible"), py::arg("height"), py::arg("width"), py::arg("stride"),
        py::arg("sigma"),
        "(K, h, w): one Gaussian of sigma cells per joint at (x, y) input pixels / stride; an "
        "all-zero map for a joint not visible.");
  py::class_<nn::DecodedKeypoints>(m, "DecodedKeypoints")
      .def_readonly("x", &nn::DecodedKeypoints::x, "(K) input pixels")
      .def_readonly("y", &nn::DecodedKeypoints::y, "(K) input pixels")
      .def_readonly("score", &nn::DecodedKeypoints::score, "(K) each map's maximum");
  m.def("decode_heatmaps", &nn::decode_heatmaps, py::arg("heatmaps"), py::arg("stride"),
        py::arg("subpixel") = true,
        "(K, h, w) -> the joints: each map's arg-max cell, plus a quarter cell toward the higher "
        "neighbour on each axis (subpixel=False skips that step).");

  py::class_<nn::PoseConfig>(m, "PoseConfig")
      .def(py::init([](const py::kwargs& kw) {
        py::object self = py::cast(nn::PoseConfig{});
        for (auto item : kw) py::setattr(self, item.first, item.second);
        return self.cast<nn::PoseConfig>();
      }))
      .def_readwrite("image_height", &nn::PoseConfig::image_height)
      .def_readwrite("image_width", &nn::PoseConfig::image_width)
      .def_readwrite("channels", &nn::PoseConfig::channels)
      .def_readwrite("patch", &nn::PoseConfig::patch)
      .def_readwrite("dim", &nn::PoseConfig::dim)
      .def_readwrite("depth", &nn::PoseConfig::depth)
      .def_readwrite("heads", &nn::PoseConfig::heads)
      .def_readwrite("mlp_dim", &nn::PoseConfig::mlp_dim)
      .def_readwrite("joints", &nn::PoseConfig::joints)
      .def_readwrite("decoder", &nn::PoseConfig::decoder)
      .def_readwrite("decoder_channels", &nn::PoseConfig::decoder_channels)
      .def("grid_height", &nn::PoseConfig::grid_height, "H/P")
      .def("grid_width", &nn::PoseConfig::grid_width, "W/P")
      .def("heatmap_height", &nn::PoseConfig::heatmap_height, "4H/P")
      .def("heatmap_width", &nn::PoseConfig::heatmap_width, "4W/P")
      .def("heatmap_stride", &nn::PoseConfig::heatmap_stride, "P/4 input pixels per cell")
      .def("forward_flops", &nn::PoseConfig::forward_flops)
      .def("validate", &nn::PoseConfig::validate)
      .def("to_json", &nn::PoseConfig::to_json)
      .def("__repr__", [](const nn::PoseConfig& c) { return "PoseConfig(" + c.to_json() + ")"; });

  ModelClass<nn::VitPose>(m, "ViTPose",
                          "heatmaps = Decoder(LN(Blocks(patch tokens + E_pos)) as a "
                          "(D, H/P, W/P) feature map)")
      .def(py::init<const nn::PoseConfig&, Generator&>(), py::arg("config"), py::arg("gen"))
      .def("__call__", &nn::VitPose::forward, py::arg("images"),
           "(B, C, H, W) -> heatmaps (B, K, 4H/P, 4W/P)")
      .def("keep_attention", &nn::VitPose::keep_attention, py::arg("on") = true)
      .def("attention_maps",
           [](const nn::VitPose& v) {
             return kept_attention(v.attention_maps(), "ViTPose.attention_maps",
                                   "keep_attention");
           },
           "One A (B, h, N, N) per block from the last forward; token n is patch "
           "(n // (W/P), n % (W/P)).")
      .def_readonly("config", &nn::VitPose::config)
      .def_property_readonly(
          "backbone", [](const nn::VitPose& v) { return std::shared_ptr<Module>(v.backbone); })
      .def_property_readonly("keypoint_head", [](const nn::VitPose& v) {
        return std::shared_ptr<Module>(v.keypoint_head);
      });
}

}  // namespace

void bind_nn(py::module_& m) {
  bind_module(m);
  bind_losses(m);
  bind_layers(m);
  bind_attention(m);
  bind_blocks(m);
  bind_vit(m);
  bind_seq2seq(m);
  bind_gpt(m);
  bind_pose(m);
}

}  // namespace uwaga::python
