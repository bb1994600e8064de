#pragma once
// Rebuilding a trained GPT from a uwaga-gpt checkpoint: the run configuration (with the character
// vocabulary) travels in the checkpoint's metadata, so the model can be built before its weights
// are loaded.
#include <string>

#include "apps/common/loaded_model.h"
#include "apps/gpt/gpt_run_config.h"

namespace uwaga::apps {

using LoadedGpt = LoadedModel<GptRunConfig, nn::Gpt>;

// Errors name the file: missing, not a checkpoint, not written by uwaga-gpt.
GptRunConfig read_gpt_run_config(const std::string& checkpoint);
LoadedGpt load_gpt(const std::string& checkpoint);
// GPT-2 checkpoints from Hugging Face (nn/gpt2_checkpoint.h), which carry no tokenizer:
// `tokenizer` names GPT-2's vocabulary files, a directory or "gpt2" (data/cache/gpt2-tokenizer,
// which data/fetch.sh gpt2-tokenizer fills).
bool is_gpt2_checkpoint(const std::string& path);  // its header names wte.weight
BpeTokenizer load_tokenizer_files(const std::string& tokenizer);
// A uwaga-gpt checkpoint (which carries its own tokenizer: `tokenizer` must be empty) or a GPT-2
// one (which needs it, and whose embedding must have as many rows as it has tokens). The run of
// a GPT-2 checkpoint holds its configuration and the tokenizer "gpt2".
LoadedGpt load_any_gpt(const std::string& checkpoint, const std::string& tokenizer);

}  // namespace uwaga::apps
