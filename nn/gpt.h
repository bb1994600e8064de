#pragma once
// A GPT: a decoder-only transformer that models text one token at a time (SEEDS §5: "GPT is a
// decoder"). Given tokens x_0 … x_{T−1} it predicts, at every position t, the next token x_{t+1}
// from x_0 … x_t alone — causal self-attention keeps each query from the keys after it:
//
//   h_0    = W_tok[x] + W_pos[0 … T−1]        token + learned position embeddings (B, T, D),
//                                             then dropout (training only)
//   h_ℓ    = Block(h_{ℓ−1}, causal)           pre-LN encoder blocks with a causal mask:
//                                             h′ = MSA(LN(h)) + h,  h_ℓ = MLP(LN(h′)) + h′
//   logits = LN(h_L) W_headᵀ                  (B, T, V): row t scores the token after x_t
//
// Everything GPT-2 has: biases in every Linear and LayerNorm (ε = 1e-5), learned positions, the
// tied head below, and with gelu = "tanh" the MLPs' GELU in the tanh form GPT-2 was trained with
// (nn/gpt2_checkpoint.h loads its Hugging Face checkpoints into this class).
//
// With tie_weights the head is the token table itself (W_head = W_tok, as in GPT-2): a token's
// input and output vectors are one and the same.
//
// Initialisation as GPT-2: every Linear weight and both embedding tables N(0, 0.02), biases 0,
// and the two projections that add into the residual stream (attn.proj, mlp.fc2) N(0, 0.02/√(2L)),
// so the residual sum of 2L such terms keeps its size as L grows.
//
// Parameter names: token_embed.weight, pos_embed.weight, blocks.<i>.{norm1, attn.qkv, attn.proj,
// norm2, mlp.fc1, mlp.fc2}.{weight, bias}, norm.{weight, bias}, head.weight (not when tied).
//
// Generation runs the model one new token at a time. forward_cached keeps what each block computed
// for the earlier tokens — their keys and values (KvCache) — so a new token costs one row of work
// per layer instead of a pass over the whole window.
#include <string>
#include <vector>

#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/model.h"
#include "nn/transformer_encoder_block.h"

namespace uwaga::nn {

struct GptConfig {
  std::int64_t vocab = 0;      // V
  std::int64_t context = 64;   // T_max: the longest window the model reads (positions)
  std::int64_t dim = 128;      // D
  std::int64_t layers = 4;     // L
  std::int64_t heads = 4;      // h
  std::int64_t mlp_dim = 512;  // the MLPs' hidden width (4·D in GPT-2)
  double dropout = 0.0;        // on the embeddings, training only
  bool tie_weights = false;    // the head reuses the token table
  // How the attention layers compute (nn/multi_head_attention.h): the fused kernel, or the
  // readable reference path. The same numbers up to rounding; a way of computing, not part of the
  // model, so it is not in the JSON (a run chooses it with --attention).
  AttentionPath attention = AttentionPath::fast;
  std::string gelu = "erf";    // the MLPs' GELU: "erf" (exact) or "tanh" (GPT-2's approximation)

  // Throws an Error naming the offending field when the configuration cannot work.
  void validate() const;
  std::string to_json() const;
  static GptConfig from_json(const std::string& json);

  // The JSON fields, one list for to_json and from_json (core/json_fields.h).
  template <class Field>
  static void fields(Field&& field) {
    field("vocab", &GptConfig::vocab);
    field("context", &GptConfig::context);
    field("dim", &GptConfig::dim);
    field("layers", &GptConfig::layers);
    field("heads", &GptConfig::heads);
    field("mlp_dim", &GptConfig::mlp_dim);
    field("dropout", &GptConfig::dropout);
    field("tie_weights", &GptConfig::tie_weights);
    field("gelu", &GptConfig::gelu);
  }
};

// What generation keeps between steps: for each block, the keys and values of every token the
// model has read so far, split into heads.
struct KvCache {
  std::vector<Tensor> K, V;  // one per block, each (B, h, t, d_k)
  std::int64_t length() const { return K.empty() || !K[0].defined() ? 0 : K[0].size(2); }  // t
  void clear() { K.clear(), V.clear(); }
};

class Gpt : public Model {
 public:
  Gpt(const GptConfig& config, Generator& gen);

  Tensor forward(const Tensor& ids);  // (B, T) int64, T ≤ context -> logits (B, T, V)
  Tensor forward_batch(const std::vector<Tensor>& inputs) override;  // {ids}
  std::shared_ptr<Model> replica() const override;

  // The logits (B, V) of the token after the last of `ids` (B, n), the model having already read
  // cache.length() tokens before them; their keys and values are appended to the cache. With an
  // empty cache `ids` is the prompt (n ≥ 1, causal attention among its tokens); after that, one
  // token at a time (n = 1), which attends to every cached token and itself. Positions run on
  // from the cache's length, so cache.length() + n may not exceed the context.
  // The same numbers as the last row of forward() over all the tokens (tests check).
  Tensor forward_cached(const Tensor& ids, KvCache& cache);

  // Keeps each block's causal self-attention weights A (B, h, T, T) from the next forward() on
  // (forward_cached does not keep them): row t is where token t looked among tokens 0 … t.
  void keep_attention(bool on);
  std::vector<Tensor> attention_maps() const;  // one per block

  const GptConfig config;
  std::shared_ptr<Embedding> token_embed;  // W_tok (V, D)
  std::shared_ptr<Embedding> pos_embed;    // W_pos (context, D)
  std::shared_ptr<Dropout> dropout;
  std::vector<std::shared_ptr<TransformerEncoderBlock>> blocks;
  std::shared_ptr<LayerNorm> norm;
  std::shared_ptr<Linear> head;  // W_head: D -> V, no bias; null when tied

 private:
  void check_ids(const Tensor& ids, std::int64_t first_position) const;
  // h_0 for tokens at positions first … first + n − 1: (B, n) -> (B, n, D).
  Tensor embed(const Tensor& ids, std::int64_t first_position);
  Tensor logits(const Tensor& h);  // LN(h) W_headᵀ: (..., D) -> (..., V)
};

}  // namespace uwaga::nn
