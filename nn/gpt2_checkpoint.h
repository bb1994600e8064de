#pragma once
// GPT-2's weights from a Hugging Face checkpoint: the model.safetensors of the `gpt2`,
// `gpt2-medium`, `gpt2-large`, `gpt2-xl` repositories, or what GPT2LMHeadModel.save_pretrained
// writes, into nn::Gpt (whose blocks are GPT-2's: pre-LN, biases everywhere, tied head).
//
// The names, Hugging Face's on the left (with or without a leading "transformer."):
//   wte.weight (V, D)                 token_embed.weight
//   wpe.weight (n_positions, D)       pos_embed.weight
//   h.<i>.ln_1.{weight, bias}         blocks.<i>.norm1.{weight, bias}
//   h.<i>.attn.c_attn.{weight, bias}  blocks.<i>.attn.qkv      weight (D, 3D) stored (in, out)
//   h.<i>.attn.c_proj.{weight, bias}  blocks.<i>.attn.proj     weight (D, D)  stored (in, out)
//   h.<i>.ln_2.{weight, bias}         blocks.<i>.norm2
//   h.<i>.mlp.c_fc.{weight, bias}     blocks.<i>.mlp.fc1       weight (D, 4D) stored (in, out)
//   h.<i>.mlp.c_proj.{weight, bias}   blocks.<i>.mlp.fc2       weight (4D, D) stored (in, out)
//   ln_f.{weight, bias}               norm.{weight, bias}
//   lm_head.weight (V, D), optional   the head: tied to wte when equal to it (GPT-2), else its own
// GPT-2 wrote its linear layers as "Conv1D", which stores the weight (in, out) — the transpose of
// Linear's (out, in) — so those four weights are transposed as they are read. Q | K | V lie side
// by side in c_attn's output columns, as in MultiHeadAttention's qkv. The causal-mask buffers
// older files carry (h.<i>.attn.bias, h.<i>.attn.masked_bias) are not weights and are skipped.
//
// The configuration comes from config.json beside the file (n_embd, n_layer, n_head,
// n_positions, vocab_size, n_inner, activation_function "gelu_new" = GELU's tanh form,
// layer_norm_epsilon 1e-5), or, without one, from the shapes, with GPT-2's head width of 64
// (heads = D / 64: 12 for gpt2, 16 medium, 20 large, 25 xl).
// Every tensor's name and shape is checked against it from the file's header before anything is
// allocated; a missing, unexpected or mis-shaped tensor is named, and so is a tensor holding NaN
// or inf, as load_checkpoint refuses one. F32, F16 and BF16 files are read (as float32).
// config.json must be a regular file of at most 1 MB (a FIFO, a device or a directory is named
// as what it is).
#include <memory>
#include <string>

#include "nn/gpt.h"

namespace uwaga::nn {

// The configuration of the checkpoint at `path` (its config.json, or its shapes), with every
// tensor of the file checked against it; reads only the header.
GptConfig gpt2_config(const std::string& path);

// The model, in float32 and eval mode.
std::unique_ptr<Gpt> load_gpt2(const std::string& path);

// The weights alone, by uwaga's names, for a model of the file's shape — what load_gpt2 loads,
// without building a model of its own (fine-tuning loads into the Trainer's). Where `config` is
// given it is set to that shape: gpt2_config's, with tie_weights false where the file's lm_head
// differs from wte.
StateDict load_gpt2_state(const std::string& path, GptConfig* config = nullptr);

// The other way: `model` as GPT2LMHeadModel.save_pretrained writes it, into `dir` (created if
// missing): model.safetensors (F32, "transformer."-prefixed names, the four Conv1D weights stored
// (in, out), lm_head.weight only when the head is not tied) and config.json (n_embd, n_layer,
// n_head, n_positions, vocab_size, n_inner, activation_function "gelu_new" for GELU's tanh form,
// "gelu" for the exact one), each written atomically. load_gpt2 on the result gives back the
// same tensors.
void save_gpt2(const Gpt& model, const std::string& dir);

}  // namespace uwaga::nn
