#pragma once
// The modes of uwaga-translate; each parses its own flags (argv[0] is the mode) and returns
// the exit status. Errors are thrown as uwaga::Error and reported by main() with status 2.
namespace uwaga::apps {

int translate_train(int argc, char** argv);
int translate_eval(int argc, char** argv);
int translate_translate(int argc, char** argv);  // apps/translate/translate_inspect.cpp
int translate_explore(int argc, char** argv);    // apps/translate/translate_inspect.cpp
int translate_vocab(int argc, char** argv);      // apps/translate/translate_inspect.cpp
int translate_plot(int argc, char** argv);       // apps/common/training_plot

// translate's exit status when a sentence had words the vocabulary lacks (without --allow-unknown).
constexpr int kUnknownWordsStatus = 3;

}  // namespace uwaga::apps
