#pragma once
// Rebuilding a trained translator from a uwaga-translate checkpoint: the run configuration (with
// both vocabularies) travels in the checkpoint's metadata, so the model can be built before its
// weights are loaded.
#include <string>

#include "apps/common/loaded_model.h"
#include "apps/translate/translate_run_config.h"

namespace uwaga::apps {

using LoadedTranslator = LoadedModel<TranslateRunConfig, nn::Seq2SeqTransformer>;

// Errors name the file: missing, not a checkpoint, not written by uwaga-translate.
TranslateRunConfig read_translate_run_config(const std::string& checkpoint);
LoadedTranslator load_translator(const std::string& checkpoint);

}  // namespace uwaga::apps
