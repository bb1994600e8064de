#include "apps/translate/translate_checkpoint.h"

namespace uwaga::apps {

TranslateRunConfig read_translate_run_config(const std::string& checkpoint) {
  return read_run_config<TranslateRunConfig, nn::Seq2SeqTransformer>(checkpoint,
                                                                     "uwaga-translate");
}

LoadedTranslator load_translator(const std::string& checkpoint) {
  return load_model<TranslateRunConfig, nn::Seq2SeqTransformer>(checkpoint, "uwaga-translate");
}

}  // namespace uwaga::apps
