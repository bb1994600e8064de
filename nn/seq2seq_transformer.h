#pragma once
// The encoder–decoder Transformer of "Attention Is All You Need" (SEEDS §5), for translation, in
// the pre-LN arrangement of uwaga's blocks:
//
//   encoder   x_0 = embed(src)·s + P           src (B, S) word ids -> (B, S, D)
//             x_ℓ = EncoderBlock(x_{ℓ−1})      self-attention; padded source words are masked
//             memory = LN(x_N)                 (B, S, D)
//   decoder   y_0 = embed(tgt_in)·s + P        the target shifted right: BOS y_1 … y_{T−1}
//             y_ℓ = DecoderBlock(y_{ℓ−1}, memory)   masked (causal) self-attention, then
//                                              cross-attention: queries from the decoder,
//                                              keys and values from the memory
//             logits = LN(y_N) W_outᵀ + b      (B, T, V_tgt): position t predicts word t+1
//
// P are the positions: the fixed sinusoids of Vaswani et al., or learned vectors. With sinusoids
// the embeddings are scaled by s = √D (and initialised N(0, 1/D)), as in the paper, so words and
// positions have comparable sizes; learned embeddings use s = 1 and trunc-normal(0, 0.02).
//
// Source and target have their own vocabularies (English and Spanish) and so their own tables.
// Parameter names follow PyTorch conventions: src_embed.weight, tgt_embed.weight,
// [src_pos_embed.weight, tgt_pos_embed.weight], encoder.<i>.{norm1,attn.qkv,attn.proj,norm2,
// mlp.fc1,mlp.fc2}, encoder_norm, decoder.<i>.{norm1,self_attn.qkv,self_attn.proj,norm2,
// cross_attn.q,cross_attn.kv,cross_attn.proj,norm3,mlp.fc1,mlp.fc2}, decoder_norm, head.
#include <string>
#include <vector>

#include "nn/dropout.h"
#include "nn/model.h"
#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/positional_encoding.h"
#include "nn/transformer_decoder_block.h"
#include "nn/transformer_encoder_block.h"

namespace uwaga::nn {

struct Seq2SeqConfig {
  std::int64_t src_vocab = 0;       // V_src, including the special tokens
  std::int64_t tgt_vocab = 0;       // V_tgt
  std::int64_t dim = 128;           // D
  std::int64_t heads = 4;           // h
  std::int64_t encoder_layers = 2;  // N_enc
  std::int64_t decoder_layers = 2;  // N_dec
  std::int64_t mlp_dim = 256;
  std::int64_t max_length = 64;     // longest source or target sequence (positions)
  std::string positions = "sinusoidal";  // "sinusoidal" or "learned"
  double dropout = 0.0;             // on the embeddings (words + positions), training only
  std::int64_t pad_id = 0;          // the id of padding in both vocabularies
  // How the attention layers compute (nn/multi_head_attention.h): the fused kernel, or the
  // readable reference path. The same numbers up to rounding; a way of computing, not part of the
  // model, so it is not in the JSON (a run chooses it with --attention).
  AttentionPath attention = AttentionPath::fast;

  // Throws an Error naming the offending field when the configuration cannot work.
  void validate() const;
  std::string to_json() const;
  static Seq2SeqConfig from_json(const std::string& json);

  // The JSON fields, one list for to_json and from_json (core/json_fields.h).
  template <class Field>
  static void fields(Field&& field) {
    field("src_vocab", &Seq2SeqConfig::src_vocab);
    field("tgt_vocab", &Seq2SeqConfig::tgt_vocab);
    field("dim", &Seq2SeqConfig::dim);
    field("heads", &Seq2SeqConfig::heads);
    field("encoder_layers", &Seq2SeqConfig::encoder_layers);
    field("decoder_layers", &Seq2SeqConfig::decoder_layers);
    field("mlp_dim", &Seq2SeqConfig::mlp_dim);
    field("max_length", &Seq2SeqConfig::max_length);
    field("positions", &Seq2SeqConfig::positions);
    field("dropout", &Seq2SeqConfig::dropout);
    field("pad_id", &Seq2SeqConfig::pad_id);
  }
};

class Seq2SeqTransformer : public Model {
 public:
  Seq2SeqTransformer(const Seq2SeqConfig& config, Generator& gen);

  // Teacher forcing: src (B, S), tgt_in (B, T) int64 -> logits (B, T, V_tgt).
  Tensor forward(const Tensor& src, const Tensor& tgt_in);
  Tensor forward_batch(const std::vector<Tensor>& inputs) override;  // {src, tgt_in}
  std::shared_ptr<Model> replica() const override;

  // src (B, S) -> memory (B, S, D), the encoder's output after its final LayerNorm.
  Tensor encode(const Tensor& src);
  // tgt_in (B, T) and the memory of its sources -> logits (B, T, V_tgt). src_padding (B, S) is
  // nonzero at padded source positions (padding_mask(src)), or undefined for none.
  Tensor decode(const Tensor& tgt_in, const Tensor& memory, const Tensor& src_padding);
  // As decode, but only the last position's logits, (B, V_tgt): one step of generation.
  Tensor decode_last(const Tensor& tgt_in, const Tensor& memory, const Tensor& src_padding);

  // (B, L) int64, 1 where ids == pad_id: the key padding mask of attention.
  Tensor padding_mask(const Tensor& ids) const;

  // Keeps each decoder block's cross-attention weights A (B, h, T, S) from the next forward on:
  // row t is where the decoder looked while predicting target word t+1.
  void keep_cross_attention(bool on);
  std::vector<Tensor> cross_attention_maps() const;  // one per decoder block
  // Keeps the self-attention weights of every encoder block, A (B, h, S, S), and of every decoder
  // block, A (B, h, T, T) (causal: row t sees target positions 0 … t), from the next forward on.
  void keep_self_attention(bool on);
  std::vector<Tensor> encoder_attention_maps() const;       // one per encoder block
  std::vector<Tensor> decoder_self_attention_maps() const;  // one per decoder block

  // The dropout on the embeddings (the trainer reseeds it for every micro-batch: seed_dropout).
  Dropout& embedding_dropout() { return *dropout; }

  const Seq2SeqConfig config;
  std::shared_ptr<Embedding> src_embed, tgt_embed;          // (V_src, D), (V_tgt, D)
  std::shared_ptr<LearnedPositionalEmbedding> src_pos_embed, tgt_pos_embed;  // learned only
  std::vector<std::shared_ptr<TransformerEncoderBlock>> encoder;
  std::shared_ptr<LayerNorm> encoder_norm;
  std::vector<std::shared_ptr<TransformerDecoderBlock>> decoder;
  std::shared_ptr<LayerNorm> decoder_norm;
  std::shared_ptr<Linear> head;  // W_out: D -> V_tgt
  std::shared_ptr<Dropout> dropout;

 private:
  // embed(ids)·s + P, then dropout: (B, L) -> (B, L, D).
  Tensor embed(const Embedding& table, const LearnedPositionalEmbedding* learned,
               const Tensor& ids);
  Tensor decoder_states(const Tensor& tgt_in, const Tensor& memory, const Tensor& src_padding);
  void check_ids(const Tensor& ids, std::int64_t vocab, const char* what) const;

  Tensor sinusoids_;  // (max_length, D): the fixed positions, when config.positions is sinusoidal
};

}  // namespace uwaga::nn
