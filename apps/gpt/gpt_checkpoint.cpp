#include "apps/gpt/gpt_checkpoint.h"

namespace uwaga::apps {

GptRunConfig read_gpt_run_config(const std::string& checkpoint) {
  return read_run_config<GptRunConfig>(checkpoint, "uwaga-gpt");
}

LoadedGpt load_gpt(const std::string& checkpoint) {
  return load_model<GptRunConfig, nn::Gpt>(checkpoint, "uwaga-gpt");
}

}  // namespace uwaga::apps
