// uwaga-gpt: a character-level GPT that learns to write like Shakespeare.
//   uwaga-gpt train [--preset shakespeare-tiny] --out runs/gpt
//   uwaga-gpt eval --checkpoint runs/gpt/checkpoint.safetensors
//   uwaga-gpt sample --checkpoint FILE --prompt "ROMEO:" --tokens 500 --temperature 0.8
//   uwaga-gpt attention --checkpoint FILE --prompt "ROMEO:" --out attention.svg
//   uwaga-gpt explore --checkpoint FILE --prompt "ROMEO:" --out explorer.html
// Wiring only: the model is nn/gpt, sampling nn/sampling, the loop optim/trainer, the text
// data/char_corpus.
#include "apps/common/command_line.h"
#include "apps/gpt/gpt_commands.h"

namespace {

const char* kUsage =
    "usage: uwaga-gpt MODE [options]\n"
    "modes:\n"
    "  train      train a character-level GPT on a text (tinyshakespeare: bash data/fetch.sh\n"
    "             tinyshakespeare); presets: shakespeare-tiny, shakespeare-small, smoke\n"
    "  eval       validation loss, bits per character and perplexity of a checkpoint\n"
    "  sample     write text from a prompt, streamed as it is generated\n"
    "  attention  draw every layer's and head's attention over a prompt's characters (SVG)\n"
    "  explore    every layer and head of the attention over a prompt, in one HTML page\n"
    "Run 'uwaga-gpt MODE --help' for the options of a mode.\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace uwaga::apps;
  return run_modes("uwaga-gpt", kUsage,
                   {{"train", gpt_train}, {"eval", gpt_eval}, {"sample", gpt_sample},
                    {"attention", gpt_attention}, {"explore", gpt_explore}},
                   argc, argv);
}
