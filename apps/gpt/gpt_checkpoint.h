#pragma once
// Rebuilding a trained GPT from a uwaga-gpt checkpoint: the run configuration (with the character
// vocabulary) travels in the checkpoint's metadata, so the model can be built before its weights
// are loaded.
#include <memory>
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
// Whether the safetensors file's header names wte.weight; fails naming a file that is not a
// regular one, or not a safetensors file.
bool is_gpt2_checkpoint(const std::string& path);
BpeTokenizer load_tokenizer_files(const std::string& tokenizer);
// nn::load_gpt2, refused up front with the estimate and the limit when the model and the file,
// which is read whole, cannot fit in memory (check_loading_fits), rather than by std::bad_alloc:
// load_any_gpt's GPT-2 path, and Python's uwaga.apps.load_gpt2.
std::unique_ptr<nn::Gpt> load_gpt2_within_memory(const std::string& checkpoint);
// A uwaga-gpt checkpoint (which carries its own tokenizer: `tokenizer` must be empty) or a GPT-2
// one (which needs it, and whose embedding must have as many rows as it has tokens). The run of
// a GPT-2 checkpoint holds its configuration and the tokenizer "gpt2".
LoadedGpt load_any_gpt(const std::string& checkpoint, const std::string& tokenizer);

}  // namespace uwaga::apps
