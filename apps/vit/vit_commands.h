#pragma once
// The modes of uwaga-vit; each parses its own flags (argv[0] is the mode) and returns the
// exit status. Errors are thrown as uwaga::Error and reported by main() with status 2. The flags
// that say which dataset a mode reads are apps/vit/vit_data_flags.h's.

namespace uwaga::apps {

int vit_train(int argc, char** argv);
int vit_eval(int argc, char** argv);
int vit_predict(int argc, char** argv);
int vit_attention(int argc, char** argv);
int vit_explore(int argc, char** argv);  // apps/common/attention_explorer
int vit_plot(int argc, char** argv);  // apps/common/training_plot

}  // namespace uwaga::apps
