#pragma once
// --tokenizer for the modes that read a checkpoint (eval, sample, attention, explore, tokenize,
// export): a uwaga-gpt checkpoint carries its own tokenizer, Hugging Face's GPT-2 file does not.
#include <cxxopts.hpp>

#include <string>

namespace uwaga::apps {

void tokenizer_flag(cxxopts::Options& o);
// The flag's value, or "" (the checkpoint's own tokenizer) — load_any_gpt's second argument.
std::string tokenizer_of(const cxxopts::ParseResult& r);

}  // namespace uwaga::apps
