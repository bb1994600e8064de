#include "apps/gpt/gpt_tokenizer_flag.h"

namespace uwaga::apps {

void tokenizer_flag(cxxopts::Options& o) {
  o.add_options()
      ("tokenizer", "for a GPT-2 checkpoint (Hugging Face's model.safetensors): its vocabulary, "
                    "gpt2 (data/cache/gpt2-tokenizer) or a directory with encoder.json and "
                    "vocab.bpe", cxxopts::value<std::string>());
}

std::string tokenizer_of(const cxxopts::ParseResult& r) {
  return r.count("tokenizer") ? r["tokenizer"].as<std::string>() : "";
}

}  // namespace uwaga::apps
