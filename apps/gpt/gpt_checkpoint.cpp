#include "apps/gpt/gpt_checkpoint.h"

#include "apps/common/block_shapes.h"

namespace uwaga::apps {

GptRunConfig read_gpt_run_config(const std::string& checkpoint) {
  return read_run_config<GptRunConfig>(checkpoint, "uwaga-gpt", gpt_parameter_shapes);
}

LoadedGpt load_gpt(const std::string& checkpoint) {
  return load_model<GptRunConfig, nn::Gpt>(checkpoint, "uwaga-gpt", gpt_parameter_shapes);
}

// As Gpt's constructor registers them.
optim::ParameterShapes gpt_parameter_shapes(const nn::GptConfig& c) {
  c.validate();
  const std::int64_t D = c.dim;
  optim::ParameterShapes shapes;
  shapes["token_embed.weight"] = {c.vocab, D};
  shapes["pos_embed.weight"] = {c.context, D};
  for (std::int64_t i = 0; i < c.layers; ++i)
    add_encoder_block(shapes, "blocks." + std::to_string(i), D, c.mlp_dim);
  add_layer_norm(shapes, "norm", D);
  if (!c.tie_weights) shapes["head.weight"] = {c.vocab, D};
  return shapes;
}

}  // namespace uwaga::apps
