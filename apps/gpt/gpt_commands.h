#pragma once
// The modes of uwaga-gpt: train, eval and export in gpt_commands, the ones that look at a model
// (sample, attention, explore, tokenize) in gpt_inspect. Each parses its own flags (argv[0] is
// the mode) and returns the exit status. Errors are thrown as uwaga::Error and reported by
// main() with status 2.
namespace uwaga::apps {

int gpt_train(int argc, char** argv);
int gpt_eval(int argc, char** argv);
int gpt_sample(int argc, char** argv);
int gpt_attention(int argc, char** argv);
int gpt_explore(int argc, char** argv);  // apps/common/attention_explorer
int gpt_tokenize(int argc, char** argv);
int gpt_export(int argc, char** argv);   // nn/gpt2_checkpoint.h save_gpt2

}  // namespace uwaga::apps
