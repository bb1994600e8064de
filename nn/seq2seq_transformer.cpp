#include "nn/seq2seq_transformer.h"

#include <cmath>

#include "core/elementwise.h"
#include "core/json_fields.h"
#include "core/shape_ops.h"
#include "nn/init.h"

namespace uwaga::nn {

void Seq2SeqConfig::validate() const {
  // At least 1, and at most a generous bound, far above any model this code can train.
  auto in_range = [](const char* name, std::int64_t v, std::int64_t limit) {
    check_size_in_range("seq2seq config", name, v, limit);
  };
  in_range("src_vocab", src_vocab, 1000000);
  in_range("tgt_vocab", tgt_vocab, 1000000);
  in_range("dim", dim, 65536);
  in_range("heads", heads, 65536);
  in_range("encoder_layers", encoder_layers, 1000);
  in_range("decoder_layers", decoder_layers, 1000);
  in_range("mlp_dim", mlp_dim, 65536);
  if (max_length < 2) fail("seq2seq config: max_length must be at least 2, got ", max_length);
  if (max_length > 100000)
    fail("seq2seq config: max_length ", max_length, " is above the limit of 100000");
  if (dim % heads != 0) fail("seq2seq config: dim ", dim, " is not divisible by heads ", heads);
  if (positions != "sinusoidal" && positions != "learned")
    fail("seq2seq config: positions '", positions, "' should be 'sinusoidal' or 'learned'");
  if (!(dropout >= 0 && dropout < 1))
    fail("seq2seq config: dropout must be in [0, 1), got ", dropout);
  if (pad_id < 0 || pad_id >= src_vocab || pad_id >= tgt_vocab)
    fail("seq2seq config: pad_id ", pad_id, " is outside the vocabularies (", src_vocab, ", ",
         tgt_vocab, ")");
}

std::string Seq2SeqConfig::to_json() const { return fields_to_json(*this).dump(); }

Seq2SeqConfig Seq2SeqConfig::from_json(const std::string& text) {
  Seq2SeqConfig c;
  fields_from_json(parse_json_input(text, "seq2seq config"), c, "seq2seq config");
  c.validate();
  return c;
}

Seq2SeqTransformer::Seq2SeqTransformer(const Seq2SeqConfig& c, Generator& gen) : config(c) {
  config.validate();
  const bool sinusoidal = c.positions == "sinusoidal";
  src_embed = register_module("src_embed", std::make_shared<Embedding>(c.src_vocab, c.dim, gen));
  tgt_embed = register_module("tgt_embed", std::make_shared<Embedding>(c.tgt_vocab, c.dim, gen));
  if (sinusoidal) {
    // Scaled by √D in embed(), so N(0, 1/D) makes the word vectors' entries ~N(0, 1), like the
    // sinusoids' entries in [−1, 1].
    init::normal(src_embed->weight, gen, 1.0 / std::sqrt(static_cast<double>(c.dim)));
    init::normal(tgt_embed->weight, gen, 1.0 / std::sqrt(static_cast<double>(c.dim)));
    // A table computed, not declared: a model built in declare-only mode has none.
    if (!declaring_only()) sinusoids_ = sinusoidal_positional_encoding(c.max_length, c.dim);
  } else {
    src_pos_embed = register_module(
        "src_pos_embed", std::make_shared<LearnedPositionalEmbedding>(c.max_length, c.dim, gen));
    tgt_pos_embed = register_module(
        "tgt_pos_embed", std::make_shared<LearnedPositionalEmbedding>(c.max_length, c.dim, gen));
  }
  for (std::int64_t i = 0; i < c.encoder_layers; ++i)
    encoder.push_back(register_module(
        "encoder." + std::to_string(i),
        std::make_shared<TransformerEncoderBlock>(
            TransformerEncoderBlockOptions{.dim = c.dim, .heads = c.heads, .mlp_dim = c.mlp_dim,
                                           .attention = c.attention},
            gen)));
  encoder_norm = register_module("encoder_norm", std::make_shared<LayerNorm>(c.dim));
  for (std::int64_t i = 0; i < c.decoder_layers; ++i)
    decoder.push_back(register_module(
        "decoder." + std::to_string(i),
        std::make_shared<TransformerDecoderBlock>(
            TransformerDecoderBlockOptions{.dim = c.dim, .heads = c.heads, .mlp_dim = c.mlp_dim,
                                           .attention = c.attention},
            gen)));
  decoder_norm = register_module("decoder_norm", std::make_shared<LayerNorm>(c.dim));
  head = register_module(
      "head", std::make_shared<Linear>(LinearOptions{.in = c.dim, .out = c.tgt_vocab}, gen));
  dropout = register_module("dropout", std::make_shared<Dropout>(c.dropout, gen.next_u64()));
}

void Seq2SeqTransformer::check_ids(const Tensor& ids, std::int64_t vocab, const char* what) const {
  check_defined(ids, "Seq2SeqTransformer");
  if (ids.dtype() != DType::Int64 || ids.dim() != 2)
    fail("Seq2SeqTransformer: ", what, " ", shape_str(ids.shape()), " ", dtype_name(ids.dtype()),
         " should be (B, L) int64 word ids");
  if (ids.size(1) < 1 || ids.size(1) > config.max_length)
    fail("Seq2SeqTransformer: ", what, " has length ", ids.size(1), "; expected 1 to max_length ",
         config.max_length);
  const std::int64_t* p = ids.data<std::int64_t>();
  for (std::int64_t i = 0; i < ids.numel(); ++i)
    if (p[i] < 0 || p[i] >= vocab)
      fail("Seq2SeqTransformer: ", what, " holds id ", p[i], ", outside its vocabulary of ", vocab,
           " words");
}

Tensor Seq2SeqTransformer::padding_mask(const Tensor& ids) const {
  Tensor mask = Tensor::zeros(ids.shape(), DType::Int64);  // (B, L)
  const std::int64_t* p = ids.data<std::int64_t>();
  std::int64_t* m = mask.data<std::int64_t>();
  for (std::int64_t i = 0; i < ids.numel(); ++i) m[i] = p[i] == config.pad_id;
  return mask;
}

Tensor Seq2SeqTransformer::embed(const Embedding& table, const LearnedPositionalEmbedding* learned,
                                 const Tensor& ids) {
  Tensor x = table.forward(ids);  // (B, L, D)
  if (learned) {
    x = learned->forward(x);  // x + P[:L]
  } else {
    Tensor P = slice(sinusoids_, 0, 0, ids.size(1));  // (L, D)
    if (P.dtype() != x.dtype()) P = P.to(x.dtype());  // a float64 model (gradient checks)
    x = x * std::sqrt(static_cast<double>(config.dim)) + P;
  }
  return dropout->forward(x);
}

Tensor Seq2SeqTransformer::encode(const Tensor& src) {
  check_ids(src, config.src_vocab, "source");
  const AttentionMask mask{.key_padding = padding_mask(src)};  // no query looks at a padded word
  Tensor x = embed(*src_embed, src_pos_embed.get(), src);  // x_0 (B, S, D)
  for (auto& block : encoder) x = block->forward(x, mask);  // x_ℓ
  return encoder_norm->forward(x);                        // memory (B, S, D)
}

Tensor Seq2SeqTransformer::decoder_states(const Tensor& tgt_in, const Tensor& memory,
                                          const Tensor& src_padding) {
  check_ids(tgt_in, config.tgt_vocab, "target input");
  if (memory.dim() != 3 || memory.size(0) != tgt_in.size(0) || memory.size(2) != config.dim)
    fail("Seq2SeqTransformer: memory ", shape_str(memory.shape()), " does not fit target input ",
         shape_str(tgt_in.shape()), ": expected (", tgt_in.size(0), ", S, ", config.dim, ")");
  Tensor y = embed(*tgt_embed, tgt_pos_embed.get(), tgt_in);  // y_0 (B, T, D)
  // Padded target positions come after the sentence's end, and the causal mask already keeps
  // every real position from seeing them, so the decoder needs no target padding mask.
  for (auto& block : decoder) y = block->forward(y, memory, Tensor(), src_padding);
  return decoder_norm->forward(y);  // (B, T, D)
}

Tensor Seq2SeqTransformer::decode(const Tensor& tgt_in, const Tensor& memory,
                                  const Tensor& src_padding) {
  return head->forward(decoder_states(tgt_in, memory, src_padding));  // (B, T, V_tgt)
}

Tensor Seq2SeqTransformer::decode_last(const Tensor& tgt_in, const Tensor& memory,
                                       const Tensor& src_padding) {
  Tensor y = decoder_states(tgt_in, memory, src_padding);          // (B, T, D)
  const std::int64_t T = y.size(1);
  Tensor last = reshape(slice(y, 1, T - 1, T), {y.size(0), config.dim});  // (B, D)
  return head->forward(last);                                      // (B, V_tgt)
}

Tensor Seq2SeqTransformer::forward_batch(const std::vector<Tensor>& inputs) {
  expect_inputs(inputs, 2, "Seq2SeqTransformer", "src (B, S) and tgt_in (B, T)");
  return forward(inputs[0], inputs[1]);
}

std::shared_ptr<Model> Seq2SeqTransformer::replica() const {
  return in_my_dtype(built_to_load<Seq2SeqTransformer>(config));  // its values are the model's
}

Tensor Seq2SeqTransformer::forward(const Tensor& src, const Tensor& tgt_in) {
  Tensor memory = encode(src);
  return decode(tgt_in, memory, padding_mask(src));
}

void Seq2SeqTransformer::keep_cross_attention(bool on) {
  for (auto& block : decoder) block->cross_attn->keep_attention(on);
}

std::vector<Tensor> Seq2SeqTransformer::cross_attention_maps() const {
  std::vector<Tensor> maps;
  for (auto& block : decoder) maps.push_back(block->cross_attn->attention());
  return maps;
}

void Seq2SeqTransformer::keep_self_attention(bool on) {
  for (auto& block : encoder) block->attn->keep_attention(on);
  for (auto& block : decoder) block->self_attn->keep_attention(on);
}

std::vector<Tensor> Seq2SeqTransformer::encoder_attention_maps() const {
  std::vector<Tensor> maps;
  for (auto& block : encoder) maps.push_back(block->attn->attention());
  return maps;
}

std::vector<Tensor> Seq2SeqTransformer::decoder_self_attention_maps() const {
  std::vector<Tensor> maps;
  for (auto& block : decoder) maps.push_back(block->self_attn->attention());
  return maps;
}

}  // namespace uwaga::nn
