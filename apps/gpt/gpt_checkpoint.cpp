#include "apps/gpt/gpt_checkpoint.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "apps/common/memory_budget.h"
#include "core/regular_file.h"
#include "core/safetensors.h"
#include "nn/gpt2_checkpoint.h"

namespace uwaga::apps {

GptRunConfig read_gpt_run_config(const std::string& checkpoint) {
  return read_run_config<GptRunConfig, nn::Gpt>(checkpoint, "uwaga-gpt");
}

LoadedGpt load_gpt(const std::string& checkpoint) {
  return load_model<GptRunConfig, nn::Gpt>(checkpoint, "uwaga-gpt");
}

bool is_gpt2_checkpoint(const std::string& path) {
  // Refuses a FIFO, a device or a directory, naming what it is.
  const SafetensorsHeader header = read_safetensors_header(path);
  return header.tensors.count("wte.weight") || header.tensors.count("transformer.wte.weight");
}

BpeTokenizer load_tokenizer_files(const std::string& tokenizer) {
  if (tokenizer == "gpt2") {
    const std::string dir = "data/cache/gpt2-tokenizer";
    if (!std::filesystem::exists(dir + "/encoder.json"))
      fail("--tokenizer gpt2: ", dir, "/encoder.json does not exist (run: bash data/fetch.sh "
           "gpt2-tokenizer, or give the directory holding encoder.json and vocab.bpe)");
    return BpeTokenizer::load(dir);
  }
  const char* expected = " (expected gpt2, or a directory holding encoder.json and vocab.bpe, or "
                         "vocab.json and merges.txt)";
  struct stat st {};
  if (::stat(tokenizer.c_str(), &st) != 0) {
    const int error = errno;
    fail("--tokenizer '", tokenizer, "' ",
         error == ENOENT ? std::string("does not exist")
                         : std::string("cannot be examined: ") + std::strerror(error),
         expected);
  }
  if (!S_ISDIR(st.st_mode))
    fail("--tokenizer '", tokenizer, "' is ", file_kind(st.st_mode), ", not a directory", expected);
  return BpeTokenizer::load(tokenizer);
}

LoadedGpt load_any_gpt(const std::string& checkpoint, const std::string& tokenizer) {
  if (!std::filesystem::exists(checkpoint)) fail("checkpoint '", checkpoint, "' does not exist");
  if (!is_gpt2_checkpoint(checkpoint)) {
    if (!tokenizer.empty()) {
      read_gpt_run_config(checkpoint);  // fails naming what it is when not a uwaga-gpt checkpoint
      fail("--tokenizer is for GPT-2 checkpoints; '", checkpoint,
           "' is a uwaga-gpt checkpoint, which carries its own");
    }
    return load_gpt(checkpoint);
  }
  if (tokenizer.empty())
    fail("'", checkpoint, "' is a GPT-2 checkpoint, which carries no tokenizer: give --tokenizer "
         "gpt2 (after bash data/fetch.sh gpt2-tokenizer) or --tokenizer DIR");
  LoadedGpt g;
  g.run.preset = "gpt2";
  g.run.model = nn::gpt2_config(checkpoint);
  g.run.tokenizer = "gpt2";
  g.run.bpe = load_tokenizer_files(tokenizer);
  if (g.run.bpe.size() != g.run.model.vocab)
    fail("the tokenizer '", tokenizer, "' has ", g.run.bpe.size(), " tokens, but the embedding of '",
         checkpoint, "' has ", g.run.model.vocab, " rows");
  g.model = load_gpt2_within_memory(checkpoint);
  return g;
}

std::unique_ptr<nn::Gpt> load_gpt2_within_memory(const std::string& checkpoint) {
  // Read whole as it is loaded: refused up front when it cannot fit, rather than by bad_alloc.
  check_loading_fits(checkpoint, declared_parameter_count<nn::Gpt>(nn::gpt2_config(checkpoint)));
  return nn::load_gpt2(checkpoint);
}

}  // namespace uwaga::apps
