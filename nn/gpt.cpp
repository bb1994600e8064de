#include "nn/gpt.h"

#include <cmath>

#include "core/elementwise.h"
#include "core/json_fields.h"
#include "core/matmul.h"
#include "core/shape_ops.h"
#include "nn/init.h"

namespace uwaga::nn {

void GptConfig::validate() const {
  // At least 1, and at most a generous bound, far above any model this code can train.
  auto in_range = [](const char* name, std::int64_t v, std::int64_t limit) {
    check_size_in_range("gpt config", name, v, limit);
  };
  in_range("vocab", vocab, 1000000);
  in_range("context", context, 100000);
  in_range("dim", dim, 65536);
  in_range("layers", layers, 1000);
  in_range("heads", heads, 65536);
  in_range("mlp_dim", mlp_dim, 262144);
  if (dim % heads != 0) fail("gpt config: dim ", dim, " is not divisible by heads ", heads);
  if (gelu != "erf" && gelu != "tanh")
    fail("gpt config: gelu must be \"erf\" or \"tanh\", got \"", gelu, "\"");
  if (!(dropout >= 0 && dropout < 1))
    fail("gpt config: dropout must be in [0, 1), got ", dropout);
}

std::string GptConfig::to_json() const { return fields_to_json(*this).dump(); }

GptConfig GptConfig::from_json(const std::string& text) {
  GptConfig c;
  nlohmann::json j = parse_json_input(text, "gpt config");
  if (j.is_object() && !j.contains("gelu")) j["gelu"] = "erf";  // written before GPT-2's GELU
  fields_from_json(j, c, "gpt config");
  c.validate();
  return c;
}

Gpt::Gpt(const GptConfig& c, Generator& gen) : config(c) {
  config.validate();
  token_embed = register_module("token_embed", std::make_shared<Embedding>(c.vocab, c.dim, gen));
  pos_embed = register_module("pos_embed", std::make_shared<Embedding>(c.context, c.dim, gen));
  dropout = register_module("dropout", std::make_shared<Dropout>(c.dropout, gen.next_u64()));
  for (std::int64_t i = 0; i < c.layers; ++i)
    blocks.push_back(register_module(
        "blocks." + std::to_string(i),
        std::make_shared<TransformerEncoderBlock>(
            TransformerEncoderBlockOptions{
                .dim = c.dim,
                .heads = c.heads,
                .mlp_dim = c.mlp_dim,
                .attention = c.attention,
                .gelu = c.gelu == "tanh" ? GeluApproximation::tanh : GeluApproximation::none},
            gen)));
  norm = register_module("norm", std::make_shared<LayerNorm>(c.dim));
  if (!c.tie_weights)
    head = register_module(
        "head", std::make_shared<Linear>(
                    LinearOptions{.in = c.dim, .out = c.vocab, .bias = false}, gen));

  // GPT-2's initialisation (the submodules drew their own first; these replace them).
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.layers));
  init::normal(token_embed->weight, gen, 0.02);
  init::normal(pos_embed->weight, gen, 0.02);
  for (auto& block : blocks) {
    init::normal(block->attn->qkv->weight, gen, 0.02);
    init::normal(block->attn->proj->weight, gen, residual_std);
    init::normal(block->mlp->fc1->weight, gen, 0.02);
    init::normal(block->mlp->fc2->weight, gen, residual_std);
  }
  if (head) init::normal(head->weight, gen, 0.02);
}

Tensor Gpt::forward_batch(const std::vector<Tensor>& inputs) {
  expect_inputs(inputs, 1, "Gpt", "ids (B, T)");
  return forward(inputs[0]);
}

std::shared_ptr<Model> Gpt::replica() const {
  return in_my_dtype(built_to_load<Gpt>(config));  // its values are the model's
}

void Gpt::check_ids(const Tensor& ids, std::int64_t first_position) const {
  check_defined(ids, "Gpt");
  if (ids.dtype() != DType::Int64 || ids.dim() != 2 || ids.size(1) < 1)
    fail("Gpt: ids ", shape_str(ids.shape()), " ", dtype_name(ids.dtype()),
         " should be (B, T) int64 token ids with T ≥ 1");
  if (first_position + ids.size(1) > config.context)
    fail("Gpt: ", first_position + ids.size(1), " tokens do not fit the context of ",
         config.context);
  const std::int64_t* p = ids.data<std::int64_t>();
  for (std::int64_t i = 0; i < ids.numel(); ++i)
    if (p[i] < 0 || p[i] >= config.vocab)
      fail("Gpt: token id ", p[i], " is outside the vocabulary of ", config.vocab);
}

Tensor Gpt::embed(const Tensor& ids, std::int64_t first) {
  check_ids(ids, first);
  const std::int64_t n = ids.size(1);
  Tensor positions = slice(pos_embed->weight, 0, first, first + n);  // W_pos[first …]  (n, D)
  return dropout->forward(token_embed->forward(ids) + positions);    // h_0      (B, n, D)
}

Tensor Gpt::logits(const Tensor& h) {
  Tensor y = norm->forward(h);                                // LN(h_L)  (..., D)
  if (head) return head->forward(y);                          // (..., V)
  return linear(y, token_embed->weight, Tensor());            // tied: y W_tokᵀ
}

Tensor Gpt::forward(const Tensor& ids) {
  const AttentionMask causal{.causal = true};  // query t sees keys 0 … t
  Tensor h = embed(ids, 0);                                   // h_0 (B, T, D)
  for (auto& block : blocks) h = block->forward(h, causal);   // h_ℓ
  return logits(h);                                           // (B, T, V)
}

Tensor Gpt::forward_cached(const Tensor& ids, KvCache& cache) {
  const std::int64_t t = cache.length();
  if (t > 0 && ids.size(1) != 1)
    fail("Gpt::forward_cached: after the prompt, one token at a time (got ", ids.size(1), ")");
  if (cache.K.empty()) cache.K.resize(blocks.size()), cache.V.resize(blocks.size());
  Tensor x = embed(ids, t);                                                // (B, n, D)
  for (std::size_t l = 0; l < blocks.size(); ++l)
    x = blocks[l]->forward_cached(x, cache.K[l], cache.V[l]);         // h_ℓ of the new tokens
  const std::int64_t n = x.size(1);
  Tensor last = reshape(slice(x, 1, n - 1, n), {x.size(0), config.dim});   // (B, D)
  return logits(last);                                                     // (B, V)
}

void Gpt::keep_attention(bool on) {
  for (auto& block : blocks) block->attn->keep_attention(on);
}

std::vector<Tensor> Gpt::attention_maps() const {
  std::vector<Tensor> maps;
  for (auto& block : blocks) maps.push_back(block->attn->attention());
  return maps;
}

}  // namespace uwaga::nn
