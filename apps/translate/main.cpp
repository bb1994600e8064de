// uwaga-translate: a toy English -> Spanish translator whose cross-attention you can look at.
//   uwaga-translate train [--preset default] --out runs/translate
//   uwaga-translate eval --checkpoint runs/translate/checkpoint.safetensors [--json]
//   uwaga-translate translate --checkpoint FILE [--beam K] ["we are eating bread" ...]
//   uwaga-translate translate --checkpoint FILE "we are eating bread" --attention attention.svg
//   uwaga-translate explore --checkpoint FILE "we are eating bread" --out explorer.html
//   uwaga-translate plot --run runs/translate [--run runs/other ...] [--out curves.svg]
// Wiring only: the model is nn/seq2seq_transformer, decoding nn/decoding, the loop
// optim/trainer, the corpus data/translation/translation_corpus, BLEU data/translation/bleu.
#include "apps/common/command_line.h"
#include "apps/translate/translate_commands.h"

int main(int argc, char** argv) {
  using namespace uwaga::apps;
  return run_modes(
      "uwaga-translate",
      {{"train", "train an encoder-decoder transformer on the toy English->Spanish corpus (presets: default, tiny)", translate_train},
       {"eval", "exact match and BLEU-4 of a checkpoint on the held-out test split", translate_eval},
       {"translate", "translate sentences (arguments, or stdin line by line); --attention FILE.svg draws one", translate_translate},
       {"explore", "every layer and head of one translation's attention, in one HTML page", translate_explore},
       {"vocab", "the English and Spanish words a checkpoint knows", translate_vocab},
       {"plot", "training curves of runs from their log.jsonl (SVG, and PNG when possible)", translate_plot}},
      argc, argv, "", {{"limit", "eval-size"}});
}
