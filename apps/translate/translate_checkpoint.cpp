#include "apps/translate/translate_checkpoint.h"

#include "apps/common/block_shapes.h"

namespace uwaga::apps {

TranslateRunConfig read_translate_run_config(const std::string& checkpoint) {
  return read_run_config<TranslateRunConfig>(checkpoint, "uwaga-translate",
                                                 translator_parameter_shapes);
}

LoadedTranslator load_translator(const std::string& checkpoint) {
  return load_model<TranslateRunConfig, nn::Seq2SeqTransformer>(checkpoint, "uwaga-translate",
                                                                translator_parameter_shapes);
}

// As Seq2SeqTransformer's constructor registers them (tests/apps check the two agree).
optim::ParameterShapes translator_parameter_shapes(const nn::Seq2SeqConfig& c) {
  c.validate();
  const std::int64_t D = c.dim;
  optim::ParameterShapes shapes;
  shapes["src_embed.weight"] = {c.src_vocab, D};
  shapes["tgt_embed.weight"] = {c.tgt_vocab, D};
  if (c.positions == "learned") {
    shapes["src_pos_embed.weight"] = {c.max_length, D};
    shapes["tgt_pos_embed.weight"] = {c.max_length, D};
  }
  for (std::int64_t i = 0; i < c.encoder_layers; ++i)
    add_encoder_block(shapes, "encoder." + std::to_string(i), D, c.mlp_dim);
  add_layer_norm(shapes, "encoder_norm", D);
  for (std::int64_t i = 0; i < c.decoder_layers; ++i)
    add_decoder_block(shapes, "decoder." + std::to_string(i), D, c.mlp_dim);
  add_layer_norm(shapes, "decoder_norm", D);
  add_linear(shapes, "head", D, c.tgt_vocab);
  return shapes;
}

}  // namespace uwaga::apps
