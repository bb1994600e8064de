// uwaga-translate: a toy English -> Spanish translator whose cross-attention you can look at.
//   uwaga-translate train [--preset default] --out runs/translate
//   uwaga-translate eval --checkpoint runs/translate/checkpoint.safetensors [--json]
//   uwaga-translate translate --checkpoint FILE [--beam K] ["we are eating bread" ...]
//   uwaga-translate translate --checkpoint FILE "we are eating bread" --attention attention.svg
// Wiring only: the model is nn/seq2seq_transformer, decoding nn/decoding, the loop
// optim/trainer, the corpus data/translation_corpus, BLEU data/bleu.
#include <cxxopts.hpp>

#include <iostream>

#include "apps/common/thread_policy.h"
#include "apps/translate/translate_commands.h"
#include "core/error.h"

namespace {

const char* kUsage =
    "usage: uwaga-translate MODE [options]\n"
    "modes:\n"
    "  train       train an encoder-decoder transformer on the toy English->Spanish corpus\n"
    "              (presets: default, tiny)\n"
    "  eval        exact match and BLEU-4 of a checkpoint on the held-out test split\n"
    "  translate   translate sentences (arguments, or stdin line by line); --attention FILE\n"
    "              draws the cross-attention of one translation (SVG)\n"
    "Run 'uwaga-translate MODE --help' for the options of a mode.\n";

}  // namespace

int main(int argc, char** argv) {
  uwaga::apps::prefer_passive_openmp_wait(argv);
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  const std::string mode = argv[1];
  try {
    if (mode == "train") return uwaga::apps::translate_train(argc - 1, argv + 1);
    if (mode == "eval") return uwaga::apps::translate_eval(argc - 1, argv + 1);
    if (mode == "translate") return uwaga::apps::translate_translate(argc - 1, argv + 1);
    std::cerr << "uwaga-translate: unknown mode '" << mode
              << "'; expected train, eval or translate (see --help)\n";
    return 2;
  } catch (const uwaga::Error& e) {
    std::cerr << "uwaga-translate: " << e.what() << "\n";
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "uwaga-translate " << mode << ": " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "uwaga-translate: unexpected error: " << e.what() << "\n";
    return 1;
  }
}
