#pragma once
// The parameter shapes of the transformer's building blocks, by name, as their constructors in
// nn/ register them: what a checkpoint's header is checked against before a model is built from
// the checkpoint's config (apps/common/loaded_model.h). Header-only, like loaded_model.h.
#include <cstdint>
#include <string>

#include "optim/checkpoint.h"

namespace uwaga::apps {

inline void add_linear(optim::ParameterShapes& s, const std::string& name, std::int64_t in,
                       std::int64_t out) {
  s[name + ".weight"] = {out, in};
  s[name + ".bias"] = {out};
}

inline void add_layer_norm(optim::ParameterShapes& s, const std::string& name, std::int64_t D) {
  s[name + ".weight"] = {D};
  s[name + ".bias"] = {D};
}

inline void add_mlp(optim::ParameterShapes& s, const std::string& name, std::int64_t D,
                    std::int64_t hidden) {
  add_linear(s, name + ".fc1", D, hidden);
  add_linear(s, name + ".fc2", hidden, D);
}

// Self-attention: one qkv projection (3D, D); cross-attention: q (D, D) and kv (2D, D).
inline void add_attention(optim::ParameterShapes& s, const std::string& name, std::int64_t D,
                          bool cross) {
  if (cross) {
    add_linear(s, name + ".q", D, D);
    add_linear(s, name + ".kv", D, 2 * D);
  } else {
    add_linear(s, name + ".qkv", D, 3 * D);
  }
  add_linear(s, name + ".proj", D, D);
}

inline void add_encoder_block(optim::ParameterShapes& s, const std::string& name, std::int64_t D,
                              std::int64_t mlp_dim) {
  add_layer_norm(s, name + ".norm1", D);
  add_attention(s, name + ".attn", D, false);
  add_layer_norm(s, name + ".norm2", D);
  add_mlp(s, name + ".mlp", D, mlp_dim);
}

inline void add_decoder_block(optim::ParameterShapes& s, const std::string& name, std::int64_t D,
                              std::int64_t mlp_dim) {
  add_layer_norm(s, name + ".norm1", D);
  add_attention(s, name + ".self_attn", D, false);
  add_layer_norm(s, name + ".norm2", D);
  add_attention(s, name + ".cross_attn", D, true);
  add_layer_norm(s, name + ".norm3", D);
  add_mlp(s, name + ".mlp", D, mlp_dim);
}

}  // namespace uwaga::apps
