#include "apps/translate/translate_checkpoint.h"

#include <filesystem>

#include "optim/checkpoint.h"

namespace uwaga::apps {

TranslateRunConfig read_translate_run_config(const std::string& checkpoint) {
  if (!std::filesystem::exists(checkpoint)) fail("checkpoint '", checkpoint, "' does not exist");
  optim::CheckpointInfo info = optim::read_checkpoint_info(checkpoint);
  try {
    return TranslateRunConfig::from_json(info.config);
  } catch (const Error& e) {
    fail("checkpoint '", checkpoint, "' was not written by uwaga-translate (", e.what(), ")");
  }
}

LoadedTranslator load_translator(const std::string& checkpoint) {
  LoadedTranslator out;
  out.run = read_translate_run_config(checkpoint);
  Generator gen(out.run.seed);
  out.model = std::make_unique<nn::Seq2SeqTransformer>(out.run.model, gen);
  optim::load_checkpoint(checkpoint, *out.model, nullptr);
  out.model->eval();
  return out;
}

}  // namespace uwaga::apps
